/* ep_index.c - GET /: a small HTML page naming the endpoints (from the
 * route table) for a person who points a browser at the agent. */
#include "serve/endpoints.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/base/text_escape.h"
#include "lib/base/version.h"

void ep_index(const struct serve_request *rq, struct serve_reply *rp)
{
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    if (!f) {
        reply_error(rp, 500, "out of memory");
        return;
    }
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>memprof serve"
            "</title></head><body>\n<h1>memprof serve %s</h1>\n<p>Control requests are %s."
            "</p>\n<table>\n<tr><th>method</th><th>endpoint</th><th>what</th></tr>\n",
            MEMPROF_VERSION, rq->cfg->allow_control ? "allowed" : "not allowed");
    for (size_t i = 0; i < serve_nroutes; i++) {
        const struct route *r = &serve_routes[i];
        fprintf(f, "<tr><td>%s</td><td><a href=\"%s\">%s</a>%s%s</td><td>", r->method,
                r->path, r->path, *r->params ? " ?" : "", r->params);
        text_markup_put(f, r->help, SIZE_MAX);      /* its '&' and the like */
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</body></html>\n", f);
    if (fclose(f) != 0) {
        free(page);
        reply_error(rp, 500, "out of memory");
        return;
    }
    reply_body(rp, 200, "text/html; charset=utf-8", page, len);
}
