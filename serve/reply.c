/* reply.c - the replies endpoints build (endpoints.h): an error is one
 * line of text/plain; a body is taken as it is. */
#include "serve/endpoints.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/worker.h"

void reply_error(struct serve_reply *rp, int status, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    free(rp->body);
    rp->status = status;
    rp->content_type = "text/plain; charset=utf-8";
    rp->body = NULL;
    rp->len = 0;
    if (n < 0)
        return;
    char *line = realloc(msg, (size_t)n + 2);
    if (!line) {
        free(msg);
        return;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    rp->body = line;
    rp->len = (size_t)n + 1;
}

void reply_body(struct serve_reply *rp, int status, const char *type, char *body, size_t len)
{
    free(rp->body);
    rp->status = status;
    rp->content_type = type;
    rp->body = body;
    rp->len = len;
}

void reply_from_worker(struct serve_reply *rp, struct worker_reply *wr, const char *type)
{
    if (wr->status == 200) {
        reply_body(rp, 200, type, wr->body, wr->len);
        wr->body = NULL;
    } else {
        /* The first line it said (say_error escaped it), without the
         * "memprof: " every error starts with. */
        char *said = wr->said, *nl = strchr(said, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(said, "memprof: ", 9) == 0)
            said += 9;
        reply_error(rp, wr->status, "%s", *said ? said : "the request failed");
        if (wr->status == 503)
            rp->retry_after = 5;
    }
    worker_reply_free(wr);
}
