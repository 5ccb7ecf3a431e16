/* test_heap_arenas.c - the heap by arena's rows (session/heap_arenas.c):
 * largest first (by resident where known, else in use and free), figures
 * the allocator does not give left out of the JSON, tcmalloc's page heap
 * as one row. */
#include "tests/unit/unit.h"

#include <json-c/json.h>
#include <string.h>

#include "session/heap_arenas.h"

START_TEST(order_and_json)
{
    struct heap_arenas a = {0};
    struct heap_arena *r = heap_arenas_add(&a, 0, "0 (main)");
    r->in_use = 100;
    r->free = 50;
    r = heap_arenas_add(&a, 1, "1");
    r->resident = 400;
    r->measured = true;
    heap_arena_extra(r, "heaps", 2);
    r = heap_arenas_add(&a, -1, "mmapped chunks");
    r->in_use = 200;
    a.arenas = 2;
    heap_arenas_sort(&a);
    ck_assert_str_eq(a.v[0].name, "1");
    ck_assert_str_eq(a.v[1].name, "mmapped chunks");
    ck_assert_uint_eq(heap_arena_bytes(&a.v[2]), 150);
    json_object *o = json_object_new_object();
    heap_arenas_json(o, &a);
    json_object *arr = json_object_object_get(o, "heap_arenas"), *e, *v;
    ck_assert_int_eq(json_object_array_length(arr), 3);
    e = json_object_array_get_idx(arr, 0);
    ck_assert(json_object_object_get_ex(e, "resident_measured", &v) && json_object_get_boolean(v));
    ck_assert(json_object_object_get_ex(e, "heaps", &v) && json_object_get_int64(v) == 2);
    ck_assert(!json_object_object_get_ex(e, "in_use", NULL));    /* not known */
    e = json_object_array_get_idx(arr, 1);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "arena")), "mmapped chunks");
    ck_assert(!json_object_object_get_ex(e, "resident_measured", NULL));
    ck_assert(json_object_object_get_ex(o, "heap_arenas_count", &v) && json_object_get_int64(v) == 2);
    ck_assert(!json_object_object_get_ex(o, "heap_arenas_note", NULL));
    json_object_put(o);
    heap_arenas_free(&a);
}
END_TEST

START_TEST(tcmalloc_page_heap)
{
    struct allocator_stats st = {.in_use = 10, .free_held = 70, .from_system = 80};
    allocator_stats_add(&st, "tcmalloc.pageheap_free_bytes", 60);
    allocator_stats_add(&st, "tcmalloc.pageheap_unmapped_bytes", 300);
    struct heap_arenas a;
    ck_assert_int_eq(heap_arenas_tcmalloc(&a, &st), 0);
    ck_assert_uint_eq(a.n, 1);
    ck_assert_str_eq(a.v[0].name, "page heap");
    ck_assert_uint_eq(a.v[0].free_resident, 70);
    ck_assert_uint_eq(a.v[0].resident, 80);
    uint64_t released = 0, caches = 0;
    for (size_t i = 0; i < a.v[0].nextra; i++) {
        if (strcmp(a.v[0].extra[i].key, "released") == 0)
            released = a.v[0].extra[i].value;
        if (strcmp(a.v[0].extra[i].key, "caches_free") == 0)
            caches = a.v[0].extra[i].value;
    }
    ck_assert_uint_eq(released, 300);
    ck_assert_uint_eq(caches, 10);
    heap_arenas_free(&a);
}
END_TEST

static Suite *arenas_suite(void)
{
    Suite *s = suite_create("heap_arenas");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, order_and_json);
    tcase_add_test(tc, tcmalloc_page_heap);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(arenas_suite)
