/* flame_js.h - the style and script inlined into every flame
 * graph SVG (lib/analysis/flame_js.c), kept apart from the C that lays it out. */
#ifndef MEMPROF_ANALYSIS_FLAME_JS_H
#define MEMPROF_ANALYSIS_FLAME_JS_H

extern const char analysis_flame_css[];
extern const char analysis_flame_script[];

#endif
