/* test_commands.c - the command table and command-line splitting. */
#include <string.h>

#include "repl/commands.h"
#include "tests/unit/unit.h"

static int split(const char *line, char ***argv)
{
    struct mp_error err;
    return command_split(line, argv, &err);
}

START_TEST(split_words_and_quotes)
{
    char **argv;
    int argc = split("  top  --focus 'Json|Parser' \"a b\" c\\ d  ", &argv);
    ck_assert_int_eq(argc, 5);
    ck_assert_str_eq(argv[0], "top");
    ck_assert_str_eq(argv[1], "--focus");
    ck_assert_str_eq(argv[2], "Json|Parser");
    ck_assert_str_eq(argv[3], "a b");
    ck_assert_str_eq(argv[4], "c d");
    ck_assert_ptr_null(argv[5]);
    free(argv);
}
END_TEST

START_TEST(split_comment_and_blank)
{
    char **argv;
    ck_assert_int_eq(split("   ", &argv), 0);
    free(argv);
    ck_assert_int_eq(split("# a comment", &argv), 0);
    free(argv);
    ck_assert_int_eq(split("prof on # trailing", &argv), 2);
    free(argv);
}
END_TEST

START_TEST(split_unterminated_quote)
{
    char **argv;
    struct mp_error err;
    ck_assert_int_eq(command_split("dump 'x", &argv, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "unterminated"));
}
END_TEST

START_TEST(split_worst_case_words)
{
    /* Every other character a word: the argv block must hold them all. */
    char line[201];
    for (int i = 0; i < 200; i++)
        line[i] = i % 2 ? ' ' : 'a';
    line[200] = '\0';
    char **argv;
    ck_assert_int_eq(split(line, &argv), 100);
    ck_assert_str_eq(argv[99], "a");
    free(argv);
}
END_TEST

START_TEST(table_is_complete)
{
    int n = 0;
    for (const struct command *c = command_table; c->name; c++, n++) {
        ck_assert_msg(c->usage && strncmp(c->usage, c->name, strlen(c->name)) == 0,
                      "usage of %s must start with its name", c->name);
        ck_assert_msg(c->summary && *c->summary, "%s has no summary", c->name);
        ck_assert_msg(c->help && strlen(c->help) > 20, "%s has no help", c->name);
        ck_assert_ptr_nonnull(c->run);
        ck_assert_ptr_eq(command_find(c->name), c);
    }
    ck_assert_int_ge(n, 15);
    ck_assert_ptr_eq(command_find("exit"), command_find("quit"));
    ck_assert_ptr_null(command_find("nonesuch"));
}
END_TEST

START_TEST(run_line_refuses_without_target)
{
    struct session s = {.out = stdout};
    ck_assert_int_eq(command_run_line(&s, "prof on"), -1);
    ck_assert_int_eq(command_run_line(&s, "info"), -1);
    ck_assert_int_eq(command_run_line(&s, "nonesuch"), -1);
    ck_assert_int_eq(command_run_line(&s, "# nothing"), 0);
    ck_assert_int_eq(command_run_line(&s, "help prof"), 0);
    ck_assert_int_eq(command_run_line(&s, "help nonesuch"), -1);
    ck_assert_int_eq(command_run_line(&s, "sleep -1"), -1);
    ck_assert_int_eq(command_run_line(&s, "sleep 0.01"), 0);
    ck_assert(!s.quit);
    ck_assert_int_eq(command_run_line(&s, "quit"), 0);
    ck_assert(s.quit);
}
END_TEST

static Suite *commands_suite(void)
{
    Suite *s = suite_create("commands");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, split_words_and_quotes);
    tcase_add_test(tc, split_comment_and_blank);
    tcase_add_test(tc, split_unterminated_quote);
    tcase_add_test(tc, split_worst_case_words);
    tcase_add_test(tc, table_is_complete);
    tcase_add_test(tc, run_line_refuses_without_target);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(commands_suite)
