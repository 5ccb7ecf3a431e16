/* cmd_report.h - usage, summary and help texts of `report` (the HTML
 * report, cmd_report.c), for the command table in commands.c. */
#ifndef MEMPROF_CMD_REPORT_H
#define MEMPROF_CMD_REPORT_H

extern const char cmd_report_usage[], cmd_report_summary[], cmd_report_help[];

#endif
