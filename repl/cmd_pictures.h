/* cmd_pictures.h - usage, summary and help texts of the picture commands
 * (flame, graph), for the command table in commands.c. */
#ifndef MEMPROF_CMD_PICTURES_H
#define MEMPROF_CMD_PICTURES_H

extern const char cmd_flame_usage[], cmd_flame_summary[], cmd_flame_help[];
extern const char cmd_graph_usage[], cmd_graph_summary[], cmd_graph_help[];

#endif
