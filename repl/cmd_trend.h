/* cmd_trend.h - the texts of `trend` for the command table, and the live
 * view that `top --watch` hands over to (cmd_trend.c). */
#ifndef MEMPROF_CMD_TREND_H
#define MEMPROF_CMD_TREND_H

#include "session/session.h"

extern const char cmd_trend_usage[], cmd_trend_summary[], cmd_trend_help[];

#endif
