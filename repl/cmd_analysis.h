/* cmd_analysis.h - usage, summary and help texts of the analysis commands
 * (top, traces, peek, tree, list, diff, dumps, load), for the command
 * table in commands.c.  They are arrays so they can initialise a static
 * table. */
#ifndef MEMPROF_CMD_ANALYSIS_H
#define MEMPROF_CMD_ANALYSIS_H

extern const char cmd_top_usage[], cmd_top_summary[], cmd_top_help[];
extern const char cmd_traces_usage[], cmd_traces_summary[], cmd_traces_help[];
extern const char cmd_peek_usage[], cmd_peek_summary[], cmd_peek_help[];
extern const char cmd_tree_usage[], cmd_tree_summary[], cmd_tree_help[];
extern const char cmd_list_usage[], cmd_list_summary[], cmd_list_help[];
extern const char cmd_diff_usage[], cmd_diff_summary[], cmd_diff_help[];
extern const char cmd_dumps_usage[], cmd_dumps_summary[], cmd_dumps_help[];
extern const char cmd_load_usage[], cmd_load_summary[], cmd_load_help[];

#endif
