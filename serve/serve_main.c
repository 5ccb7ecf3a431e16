/* serve_main.c - `memprof serve`: its command line, then listening until
 * SIGTERM, SIGINT or SIGHUP, which end it cleanly: no new request, the
 * ones under way finish (each worker within its time limit, its settings
 * put back by its own session). */
#include "serve/serve.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/version.h"
#include "serve/capabilities.h"
#include "serve/http.h"
#include "serve/mesos_runs.h"
#include "serve/targets.h"
#include "serve/web_guard.h"
#include "serve/worker.h"

static const char usage_text[] =
    "usage: memprof serve [--listen ADDR:PORT] [--target RULE]... [--allow-control]\n"
    "                     [--max-connections N] [--timeout S] [--scrape-parallel N]\n"
    "                     [--web-config FILE] [--quiet]\n"
    "\n"
    "An HTTP agent giving every process of this host the endpoints fleets scrape:\n"
    "Prometheus metrics, pprof heap profiles, Mesos' memory-profiler API, the list\n"
    "of processes.  Each request attaches for the length of its work (a Mesos run\n"
    "for the run's) and lets go again.\n"
    "\n"
    "  --listen ADDR:PORT   where to listen (default 127.0.0.1:9188; [::1]:PORT for\n"
    "                       IPv6; port 0: any free one, said on stderr)\n"
    "  --target RULE        serve only processes matching RULE (repeatable; any of\n"
    "                       them): comma-separated name=NAME (the label its metrics\n"
    "                       carry), user=USER, exe=GLOB, comm=GLOB,\n"
    "                       container=[RUNTIME://]ID (12 to 64 hex digits: a prefix\n"
    "                       of the id), cgroup=GLOB (on the path /processes shows)\n"
    "  --allow-control      allow the POST endpoints that change a process\n"
    "  --max-connections N  requests served at once (default 16)\n"
    "  --timeout S          a request's work in one process, at most (default 60)\n"
    "  --scrape-parallel N  /metrics: processes read at once (default twice the\n"
    "                       CPUs); all within the scrape's deadline: Prometheus'\n"
    "                       X-Prometheus-Scrape-Timeout-Seconds less 0.5 s, or 10 s\n"
    "  --web-config FILE    TLS, basic-auth users (bcrypt) and response headers, in the\n"
    "                       Prometheus exporter toolkit's web config format (the file\n"
    "                       node_exporter takes with --web.config.file); read once\n"
    "  --quiet              no line per request on stderr (control requests are\n"
    "                       always logged)\n"
    "  -h, --help           this text\n"
    "\n"
    "Endpoints: GET / lists them.  docs/serve.md says how to point Prometheus,\n"
    "Parca, Grafana Alloy, go tool pprof and Mesos' scripts at them.\n";

static int parse_listen(const char *arg, struct serve_config *cfg)
{
    const char *colon = strrchr(arg, ':');
    if (!colon || colon == arg)
        return -1;
    size_t hostlen = (size_t)(colon - arg);
    if (arg[0] == '[' && hostlen >= 2 && arg[hostlen - 1] == ']')
        arg++, hostlen -= 2;
    if (hostlen >= sizeof cfg->listen_addr)
        return -1;
    memcpy(cfg->listen_addr, arg, hostlen);
    cfg->listen_addr[hostlen] = '\0';
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || port > 65535)
        return -1;
    cfg->port = (uint16_t)port;
    return 0;
}

static int parse_count(const char *arg, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    if (!*arg || *end || errno || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Twice the CPUs: a worker mostly waits (for its process's thread to stop,
 * for its calls), so the CPUs stay busy with two each. */
static unsigned default_parallel(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 2 : cpus > 128 ? 256 : (unsigned)cpus * 2;
}

static int parse_args(int argc, char **argv, struct serve_config *cfg)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"target", required_argument, NULL, 't'},
        {"allow-control", no_argument, NULL, 'C'},
        {"max-connections", required_argument, NULL, 'm'},
        {"timeout", required_argument, NULL, 'T'},
        {"scrape-parallel", required_argument, NULL, 'P'},
        {"web-config", required_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
        struct mp_error err;
        switch (c) {
        case 'l':
            if (parse_listen(optarg, cfg) < 0) {
                fprintf(stderr, "memprof serve: --listen '%s' is not ADDR:PORT (127.0.0.1:9188, "
                        "[::1]:9188)\n", optarg);
                return 2;
            }
            break;
        case 't': {
            struct serve_rule *grown = realloc(cfg->rules, (cfg->nrules + 1) * sizeof *grown);
            if (!grown)
                return 2;
            cfg->rules = grown;
            if (targets_parse_rule(optarg, &cfg->rules[cfg->nrules], &err) < 0) {
                fprintf(stderr, "memprof serve: %s\n", err.msg);
                return 2;
            }
            cfg->nrules++;
            break;
        }
        case 'C': cfg->allow_control = true; break;
        case 'm':
            if (parse_count(optarg, 1, 1024, &cfg->max_connections) < 0) {
                fprintf(stderr, "memprof serve: --max-connections takes 1 to 1024\n");
                return 2;
            }
            break;
        case 'T':
            if (parse_count(optarg, 1, 3600, &cfg->request_timeout_s) < 0) {
                fprintf(stderr, "memprof serve: --timeout takes 1 to 3600 seconds\n");
                return 2;
            }
            break;
        case 'P':
            if (parse_count(optarg, 1, 256, &cfg->scrape_parallel) < 0) {
                fprintf(stderr, "memprof serve: --scrape-parallel takes 1 to 256\n");
                return 2;
            }
            break;
        case 'w': cfg->web_config = optarg; break;
        case 'q': cfg->quiet = true; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "memprof serve: unexpected '%s'; memprof serve --help lists the "
                "options\n", argv[optind]);
        return 2;
    }
    return -1;      /* go on */
}

int serve_main(int argc, char **argv)
{
    struct serve_config cfg = {.listen_addr = "127.0.0.1", .port = 9188,
                               .max_connections = 16, .request_timeout_s = 60,
                               .max_seconds = 600, .scrape_parallel = default_parallel()};
    int rc = parse_args(argc, argv, &cfg);
    struct web_guard web;
    struct mp_error err;
    if (rc < 0 && cfg.web_config) {
        if (web_guard_open(cfg.web_config, &web, stderr, &err) < 0) {
            fprintf(stderr, "memprof serve: %s\n", err.msg);
            rc = 2;
        } else
            cfg.web = &web;
    }
    if (rc >= 0) {
        targets_free_rules(cfg.rules, cfg.nrules);
        free(cfg.rules);
        return rc;
    }
    /* The stop signals are taken by sigwait here; blocked before the
     * first thread starts, so that none of libmicrohttpd's gets them. */
    sigset_t stop;
    worker_stop_signals(&stop);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    struct serve_http *h = mesos_runs_init(&err) == 0 ? http_start(&cfg, &err) : NULL;
    char guarded[160] = "";
    if (cfg.web)
        web_guard_describe(cfg.web, guarded, sizeof guarded);
    if (!h) {
        mesos_runs_end(0);
        fprintf(stderr, "memprof serve: %s\n", err.msg);
        if (cfg.web)
            web_guard_close(&web);
        targets_free_rules(cfg.rules, cfg.nrules);
        free(cfg.rules);
        return 1;
    }
    fprintf(stderr, "memprof serve %s: listening on %s%s%s:%u%s%s\n", MEMPROF_VERSION,
            strchr(cfg.listen_addr, ':') ? "[" : "", cfg.listen_addr,
            strchr(cfg.listen_addr, ':') ? "]" : "", http_port(h),
            cfg.allow_control ? " (control allowed)" : "", guarded);
    serve_note_own_capabilities(stderr);
    /* Once a second, profiling runs that have ended are reaped (and one
     * whose worker overstayed its run is ended). */
    int sig;
    struct timespec tick = {.tv_sec = 1};
    while ((sig = sigtimedwait(&stop, NULL, &tick)) < 0)
        mesos_runs_tick(cfg.request_timeout_s);
    unsigned n = http_under_way(h);
    fprintf(stderr, "memprof serve: %s: ending (%u request%s under way finish first, "
            "then every profiling run ends with its settings put back)\n",
            strsignal(sig), n, n == 1 ? "" : "s");
    http_stop(h);
    mesos_runs_end(cfg.request_timeout_s);
    if (cfg.web)
        web_guard_close(&web);
    targets_free_rules(cfg.rules, cfg.nrules);
    free(cfg.rules);
    return 0;
}
