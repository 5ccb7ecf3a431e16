/* command_table.c - the command table: one row per command with its
 * usage, summary and help (`help` and TAB completion read them), and the
 * lookup of a command by its name. */
#include "repl/command_table.h"

#include <string.h>

const struct command command_table[] = {
    {"help", "help [COMMAND]", "list commands, or explain one",
     "With no argument, lists every command.  With a command name, prints\n"
     "its usage and what it does.",
     cmd_help, 0},
    {"attach", "attach PID", "attach to a running process",
     "Checks the process (alive, not stopped, not already traced, permission),\n"
     "finds jemalloc's mallctl in it, and reads its profiling state with one\n"
     "short stop of one thread.  Nothing else is stopped or changed.",
     cmd_attach, CMD_CALLS_TARGET},
    {"detach", "detach", "let go of the process",
     "Removes the session's dump directory (if a dump needed one) from the\n"
     "process's filesystem and forgets the process.  The dumps already taken stay in the session.",
     cmd_detach, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"info", "info [--json]", "the process, its container, allocator and profiling state",
     "Shows the pid, executable and which allocator serves its memory (the\n"
     "one its malloc() reaches in the loader's order: jemalloc, glibc malloc,\n"
     "gperftools tcmalloc or tcmalloc_minimal, mimalloc, or one memprof does\n"
     "not know) and what memprof can do there.  For jemalloc: its version and\n"
     "where it was found,\n"
     "config.prof, opt.prof, opt.prof_active, prof.active, prof.lg_sample,\n"
     "opt.lg_prof_interval, opt.prof_prefix, prof.gdump, the number of threads,\n"
     "and how long memprof stopped a thread: the number of stops, the last\n"
     "(and which thread), median, p90 and maximum, and how many unsafe threads\n"
     "it passed over.  Also its cgroup as the host sees it, the container and\n"
     "pod that path names (runtime, container id, pod uid, QoS class), its pid\n"
     "inside its own pid namespace, and each behaviour of its jemalloc's\n"
     "version that memprof works around (5.2: what 'prof on' uses and why).\n"
     "Whether 'prof on' could put memprof's sampler in is judged as 'prof on'\n"
     "judges it, under the process's seccomp filters too (read in one stop).\n"
     "--json: the same as one JSON document (docs/memprof.1).",
     cmd_info, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"jemalloc", "jemalloc [N]", "list the process's jemalloc copies, or pick one",
     "A process can hold several copies of jemalloc (a static one in the\n"
     "executable and a shared one, say).  With no argument, lists them; the\n"
     "one marked '*' is the one memprof drives.  'jemalloc N' picks copy N.",
     cmd_jemalloc, CMD_NEEDS_TARGET | CMD_CALLS_TARGET | CMD_JEMALLOC},
    {"prof", "prof on|off|sample N|reset [--force] [--json], prof on|off --mappings", "turn sampling on or off, set its rate",
     "prof on        start sampling (prof.active = true)\n"
     "prof off       stop sampling (prof.active = false)\n"
     "prof sample N  reset the counters and sample every 2^N bytes on average\n"
     "               (prof.reset with lg_sample N; jemalloc's default is 19,\n"
     "               512 KiB).  Low values cost memory: about 16 KiB per\n"
     "               sampled small allocation; memprof warns with an estimate\n"
     "               and refuses a rate that could double it without --force.\n"
     "prof reset     reset the counters, keep the rate\n"
     "jemalloc's own profiler needs the process started with\n"
     "MALLOC_CONF=prof:true (add prof_active:false to pay nothing until\n"
     "'prof on').  When its owner\n"
     "started it with profiling active (opt.prof_active), 'prof off', 'prof\n"
     "sample' and 'prof reset' need --force; reading and dumping do not.\n"
     "When a batch stops at an error (or memprof is ended by a signal), what\n"
     "the session changed (prof.active, the rate, prof.gdump, recent's record)\n"
     "is put back; a session that ends normally leaves it and says on stderr\n"
     "what stays and how to undo it.\n"
     "In a process whose allocator has no profiler memprof can turn on (glibc\n"
     "malloc, tcmalloc, mimalloc, a jemalloc started without prof:true), 'prof\n"
     "on' puts memprof's own sampler into it without a restart, sampling by\n"
     "bytes as jemalloc does (default every 2^19 bytes), and the program's own\n"
     "mmap/munmap/mremap/sbrk/brk too (stacks under the root\n"
     "'[mapped: mmap/mremap/brk]');\n"
     "'prof off', 'detach', 'quit', the end of a batch and SIGINT/SIGTERM/\n"
     "SIGHUP take it out again (docs/sampler.md).  'prof sample N' and 'prof\n"
     "reset' forget its samples.\n"
     "'prof on' uses the sampler too for a jemalloc 5.2 whose threads ran\n"
     "with profiling off (its own profiler would never sample them again).\n"
     "Under seccomp filters (containers, systemd) memprof reads and evaluates\n"
     "them first, and puts the sampler in only where they let its system\n"
     "calls through; else it names the call and what the filter would do.\n"
     "'prof on --mappings' in a process whose jemalloc profiles itself (its\n"
     "profiler cannot follow mmap) puts memprof's sampler in for mmap, munmap,\n"
     "mremap, sbrk and brk alone, beside it; 'dump --mappings' takes their\n"
     "profile and 'prof off --mappings' (or any end of the session) takes it\n"
     "out.",
     cmd_prof, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"dump", "dump [FILE] [--name NAME] [--mappings] [--json]", "take a heap profile from the process",
     "The process writes its profile into an anonymous in-memory file that\n"
     "memprof reads and the process closes in the same stop (or, when that\n"
     "cannot work, into a private directory: see --dump-dir); memprof keeps\n"
     "it in the session (see 'dumps') and, given FILE, saves a copy.  It is\n"
     "named NAME, or dump1, dump2... in order.  A FILE starting with '-' goes\n"
     "after '--' (dump -- -name).  With memprof's sampler (see 'prof') the\n"
     "dump is its live samples, read from the process's memory without\n"
     "stopping a thread; --mappings takes the mappings memprof's sampler\n"
     "follows beside jemalloc's own profiler ('prof on --mappings').",
     cmd_dump, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"mallctl", "mallctl [NAME [VALUE]] [--type TYPE] [--force] [--json]", "read or write any mallctl name",
     "Reads NAME, or writes VALUE to it; a VALUE that starts with '-' goes after\n"
     "'--' (mallctl arenas.dirty_decay_ms -- -1).  memprof knows every name of\n"
     "jemalloc(3) with its type and access, and checks each call before making\n"
     "it: a write-only name is not read, a read-or-write name (thread.prof.name)\n"
     "is never both, a value of the wrong type is refused.  Without a value a\n"
     "name only reads, except actions (void, such as arena.4096.purge);\n"
     "prof.dump and prof.reset have their commands ('dump', 'prof reset').\n"
     "Names that discard memory (arena.<i>.reset, arena.<i>.destroy) or create\n"
     "something when read (arenas.create, tcache.create) need --force.\n"
     "stats.* are refreshed (epoch) in the same stop before they are read.\n"
     "For a name newer than the table give --type bool|unsigned|uint32_t|\n"
     "size_t|ssize_t|uint64_t|int64_t|string|void.  'mallctl' alone lists the\n"
     "names.",
     cmd_mallctl, CMD_CALLS_TARGET | CMD_JEMALLOC},
    {"stats", "stats [--summary] [--json [--max-size SIZE]]", "the allocator's statistics: totals, arenas, size classes",
     "glibc malloc: malloc_info() written, in one stop, into an in-memory file\n"
     "the process makes and closes (never its stderr: malloc_stats() is never\n"
     "called): in use, free and held, from the system, mmapped, and per arena\n"
     "its heap, peak, free and fast-bin bytes.  gperftools tcmalloc:\n"
     "MallocExtension's numeric properties and its own report (GetStats).\n"
     "--summary: the totals alone; --json: all of it (docs/memprof.1).\n"
     "mimalloc and unknown allocators: refused, saying why.  jemalloc:\n"
     "A one-screen summary read in one stop of one thread (epoch first):\n"
     "allocated, active, metadata, resident, mapped, retained; fragmentation\n"
     "(active - allocated) and the unused dirty and muzzy pages; one line per\n"
     "arena (threads, allocated, dirty and muzzy, decay times; the first 64\n"
     "arenas); and the size distribution: each small (bin) and large size class\n"
     "with its current count and bytes.  The first 'stats' of a process reads\n"
     "jemalloc's size classes (constants of its build) in a stop of its own.\n"
     "--summary --json: the summary as JSON (docs/memprof.1).\n"
     "--json: jemalloc's complete statistics exactly as malloc_stats_print\n"
     "writes them with its JSON option, captured in one stop through a write\n"
     "callback memprof places in the process and removes before the thread runs\n"
     "again (never the process's stdout, stderr or a file); memprof checks that\n"
     "its stats.allocated agrees with mallctl's in the same stop and says how\n"
     "many bytes it captured.  At most SIZE bytes (default 64M; K, M, G).\n"
     "The process must allow an executable anonymous mapping (not under\n"
     "SELinux deny execmem or PaX MPROTECT): if not, memprof says so.",
     cmd_stats, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"recent", "recent on [N] | off | [--live] [--older-than AGE] [--json]", "recent sampled allocations (jemalloc 5.3)",
     "recent on [N]  keep the last N sampled allocations (default 1000;\n"
     "               experimental.prof_recent.alloc_max); 'recent off' puts\n"
     "               back the value before; it stays after a normal end (as\n"
     "               prof settings do) and is put back after a failed one\n"
     "recent         list them: size, thread, age, freed or live, stack\n"
     "--live         only those still allocated\n"
     "--older-than AGE  only those older than AGE (30s, 500ms, 2m, 1h):\n"
     "               'recent --live --older-than 30s' lists memleak's\n"
     "               outstanding allocations, without a probe\n"
     "The record is captured in one stop through a write callback memprof\n"
     "places in the process and removes (as 'stats --json'; at most\n"
     "--max-size bytes, default 64M).  Only sampled allocations are kept:\n"
     "start the process with MALLOC_CONF=prof:true and a low lg_prof_sample\n"
     "to see small ones, and with profiling active ('prof on').",
     cmd_recent, CMD_NEEDS_TARGET | CMD_CALLS_TARGET | CMD_JEMALLOC},
    {"purge", "purge [ARENA] [--json]", "return the allocator's free pages to the system",
     "Purges every arena's unused dirty and muzzy pages (arena.4096.purge), or\n"
     "only arena ARENA's, in one stop, then shows RSS (VmRSS) and jemalloc's\n"
     "stats.resident before and after and how much came back.  An arena that\n"
     "does not exist is refused before anything is purged.  glibc malloc:\n"
     "malloc_trim(0) (every arena: no ARENA), with RSS before and after and how\n"
     "long the thread was held; it takes each arena's lock in turn, and above\n"
     "1 GiB of anonymous memory memprof says first that it may take a while.\n"
     "gperftools tcmalloc: MallocExtension_ReleaseFreeMemory(), with RSS and\n"
     "tcmalloc's free bytes before and after.",
     cmd_purge, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"decay", "decay [DIRTY_MS [MUZZY_MS]] [--json]", "show or set dirty/muzzy decay",
     "Without values, shows dirty_decay_ms and muzzy_decay_ms of every\n"
     "initialized arena and for new arenas.  With DIRTY_MS (and MUZZY_MS,\n"
     "else the same), sets both in every arena and for new arenas, in one\n"
     "stop, and shows old -> new.  0 purges at once, -1 never purges\n"
     "(write it after '--': decay -- -1).  A normal end of the session\n"
     "leaves the times set and says how to put them back; a failing one\n"
     "(an error in a batch, a stop signal) puts them back.",
     cmd_decay, CMD_NEEDS_TARGET | CMD_CALLS_TARGET | CMD_JEMALLOC},
    {"memory", "memory [--maps] [--arenas] [--interval S] [--json]", "the process's whole memory, reconciled with its allocator's",
     "RSS, PSS, anonymous and file-backed, swap (smaps_rollup, status), peak\n"
     "RSS (VmHWM); jemalloc's allocated, resident, mapped and retained (one\n"
     "stop, after epoch) and the anonymous memory that is not jemalloc's\n"
     "(anonymous RSS - stats.resident: thread stacks, other mmaps); for glibc\n"
     "malloc and tcmalloc their in-use, free and from-the-system figures and\n"
     "the anonymous memory beyond them (for mimalloc, none, and why); page\n"
     "faults (with --interval S, their rate over S seconds); oom_score and\n"
     "oom_score_adj; the host's OOM kills (/proc/vmstat).  The process's\n"
     "cgroup, read from the host's cgroup file system (v1's memory hierarchy\n"
     "where mounted, else v2; also for a process in a container): usage\n"
     "against the limit and the headroom left, its RSS as a share of the\n"
     "limit, anonymous and page cache, memory.high, the events (oom,\n"
     "oom_kill, oom_group_kill, high, max; v1 oom_kill, under_oom, failcnt)\n"
     "and memory pressure (PSI).  Where RSS is: one read of smaps in\n"
     "categories that add up to it exactly (thread stacks found by their\n"
     "stack pointers, memprof's sampler, the anonymous memory set against\n"
     "the allocator's figure, shared memory, each file).  The heap by\n"
     "arena: in use, free, free but resident, metadata and resident bytes\n"
     "of each of jemalloc's arenas (its own figures, in the same stop),\n"
     "glibc's arenas (malloc_info's, each arena's resident bytes measured\n"
     "from the mappings that hold it: [heap], its 64 MiB-aligned heaps) and\n"
     "mmapped chunks, tcmalloc's page heap (with its released bytes); the\n"
     "largest few, the rest in one line (--arenas: each).  Diagnoses, largest\n"
     "first, each with its bytes and what to do: huge pages holding memory\n"
     "never written, jemalloc's unpurged pages in an idle process, glibc's\n"
     "free memory in its arenas, tcmalloc's free page heap, exited threads'\n"
     "stacks glibc caches, a mapping that grew (over --interval S, else since\n"
     "the previous 'memory'), the cgroup near its limit.  --maps groups\n"
     "/proc/PID/smaps like\n"
     "pmap -x: anonymous read-write (jemalloc's extents and other mmaps, split\n"
     "by stats.resident), thread stacks ([stack], and anonymous read-write\n"
     "memory just above a PROT_NONE guard), each file, the rest; with RSS,\n"
     "dirty and swap per group.  --json: figures in bytes (docs/memprof.1).",
     cmd_memory, CMD_NEEDS_TARGET | CMD_CALLS_TARGET},
    {"faults", "faults SECONDS [--period N | --freq HZ] [--name NAME] [--json]",
     "what makes RSS grow: page faults sampled by call stack, as a dump",
     "Samples the process's page faults for SECONDS with perf_event_open\n"
     "(the software page-fault event on each of its threads, threads made\n"
     "meanwhile included): no thread is stopped and nothing is written into the\n"
     "process; the kernel copies each sample's registers and 8 KiB of the\n"
     "thread's stack, which memprof walks with its own unwind rows (.eh_frame).\n"
     "The result is a dump (faultsN, or --name NAME) that top, flame, diff,\n"
     "trend, report and pprof read like a heap dump: each stack's bytes are\n"
     "the faults it took times the page size (memory first touched there, as\n"
     "RSS grows by it; a fault is not net growth: copy-on-write and page-cache\n"
     "faults count, a huge page counts once), its objects the faults.  Also\n"
     "says which mappings took the faults ([heap], anonymous, thread stack, a\n"
     "file).  Sampling: --period N one sample every N faults of a thread\n"
     "(default 8), or --freq HZ about HZ samples a second of each thread (the\n"
     "kernel adjusts the period as it goes: few samples of a thread that faults\n"
     "in bursts).  The kernel allows it for a process memprof may read as\n"
     "ptrace does at kernel.perf_event_paranoid <= 2, else with CAP_PERFMON;\n"
     "faults the kernel takes for the process (read() into new pages) need\n"
     "CAP_PERFMON or paranoid <= 1.  --json: docs/memprof.1.",
     cmd_faults, CMD_NEEDS_TARGET},
    {"load", cmd_load_usage, cmd_load_summary, cmd_load_help, cmd_load, 0},
    {"profile", "profile [start|state|stop|wait|save] ...",
     "profiling runs: a dump every so often, settings put back at the end",
     "profile start [--duration D] [--every I] [--sample N] [--peak] [--faults]\n"
     "              [--name NAME] [--save DIR] [--force] [--json]\n"
     "  Starts a run: turns profiling on (at lg_sample N with --sample, which\n"
     "  resets the counters), takes a dump every I (default: a tenth of D, at\n"
     "  least 1 s; 60 s without --duration) and a last one at the end, then puts\n"
     "  prof.active and the rate back as they were.  D and I: 500ms, 20s, 5m,\n"
     "  1h, 1d or plain seconds; without --duration the run lasts until\n"
     "  'profile stop'.  --peak also keeps a dump at every new high-water mark\n"
     "  of the process's memory (jemalloc's prof.gdump, its files sent to\n"
     "  memprof's private directory with prof.prefix; both put back).  The\n"
     "  dumps form a series named NAME (run1, run2... by default: dumps\n"
     "  run1.1, run1.2, run1.peak1...) that trend, report, top, diff and the\n"
     "  other analyses take.  --save DIR writes the series there when the run\n"
     "  ends, however it ends.  One run at a time; refused without --force when\n"
     "  the process's owner turned profiling on at its start (MALLOC_CONF).\n"
     "  The prompt stays usable meanwhile; in batch the run goes on between\n"
     "  commands and during 'sleep'.  An end of the input or a stop signal\n"
     "  ends a run early (its settings are put back).  --faults: a run of page-\n"
     "  fault dumps instead of heap dumps (see 'help faults'; a sample every 8\n"
     "  faults), each holding the faults since the one before; nothing of the\n"
     "  process's is changed (no --sample, no --peak).\n"
     "profile [state] [--json]   the run: state, elapsed and remaining time,\n"
     "  dumps taken, the latest dump.\n"
     "profile stop [--json]      ends the run now, with a last dump.\n"
     "profile wait [--json]      waits for the run's end (Ctrl-C at the prompt\n"
     "  stops the run).\n"
     "profile save DIR [SERIES]  writes a series (default: the last run's) to a\n"
     "  new or empty directory: each dump as jemalloc wrote it (jeprof reads\n"
     "  them), its build-ids, manifest.json, and the objects its frames are\n"
     "  named from (DIR/.build-id/, checked by build-id; at most 1 GiB, what is\n"
     "  left out is said); 'memprof DIR' or 'load DIR' reads it back, on\n"
     "  another machine too.",
     cmd_profile, 0},     /* holds Ctrl-C itself around its calls: 'wait' takes it */
    {"dumps", cmd_dumps_usage, cmd_dumps_summary, cmd_dumps_help, cmd_dumps, 0},
    {"top", cmd_top_usage, cmd_top_summary, cmd_top_help, cmd_top, 0},
    {"traces", cmd_traces_usage, cmd_traces_summary, cmd_traces_help, cmd_traces, 0},
    {"peek", cmd_peek_usage, cmd_peek_summary, cmd_peek_help, cmd_peek, 0},
    {"tree", cmd_tree_usage, cmd_tree_summary, cmd_tree_help, cmd_tree, 0},
    {"list", cmd_list_usage, cmd_list_summary, cmd_list_help, cmd_list, 0},
    {"diff", cmd_diff_usage, cmd_diff_summary, cmd_diff_help, cmd_diff, 0},
    {"trend", cmd_trend_usage, cmd_trend_summary, cmd_trend_help, cmd_trend, 0},
    {"flame", cmd_flame_usage, cmd_flame_summary, cmd_flame_help, cmd_flame, 0},
    {"graph", cmd_graph_usage, cmd_graph_summary, cmd_graph_help, cmd_graph, 0},
    {"report", cmd_report_usage, cmd_report_summary, cmd_report_help, cmd_report, 0},
    {"pprof", "pprof FILE [DUMP]", "write a profile in pprof's format",
     "Writes the profile (default: the latest) to FILE as gzip-compressed\n"
     "profile.proto, symbolized with functions, files, lines and inlined\n"
     "frames: sample types inuse_objects and inuse_space (and alloc_* when the\n"
     "process kept cumulative counts; a faults dump's: faults and faulted_space),\n"
     "values already unsampled.",
     cmd_pprof, 0},
    {"sleep", "sleep SECONDS", "wait (in scripts: let the process run between commands)",
     "Waits SECONDS (fractions allowed, at most 3600) without stopping anything.\n"
     "Useful in batch: prof on, sleep 30, dump.",
     cmd_sleep, 0},
    {"set", "set pager on|off", "change a setting of the session",
     "set pager off   print long answers at the prompt directly\n"
     "set pager on    page them through $PAGER (default 'less -FRX'), the\n"
     "                default on a terminal (memprof --no-pager starts off)",
     cmd_set, 0},
    {"quit", "quit", "leave memprof (also: exit, Ctrl-D)",
     "Detaches cleanly: nothing is left stopped or written in the process's\n"
     "filesystem.  At the prompt, when this session turned profiling on and\n"
     "it is still on, asks whether to turn it off first (Enter: yes; n keeps\n"
     "it on; Ctrl-C stays at the prompt).  A batch leaves it on and says so\n"
     "on stderr, with the command that turns it off.",
     cmd_quit, 0},
    {NULL, NULL, NULL, NULL, NULL, 0},
};

const struct command *command_find(const char *name)
{
    if (strcmp(name, "exit") == 0)
        name = "quit";
    for (const struct command *c = command_table; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* Edit distance (insertions, deletions, substitutions), for "did you mean". */
const struct command *command_lookup(const char *word)
{
    const struct command *found = command_find(word);
    size_t len = strlen(word), n = 0;
    for (const struct command *c = command_table; !found && c->name; c++)
        n += strncmp(c->name, word, len) == 0;
    for (const struct command *c = command_table; !found && n == 1 && c->name; c++)
        if (strncmp(c->name, word, len) == 0)
            found = c;
    return found;
}
