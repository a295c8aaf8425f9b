/* tests/check.h — the tiny assertion layer every C test uses. A failed CHECK prints the
 * place and the values and marks the test failed; the test keeps going so one run shows
 * every failure. Exit status: 0 if all checks passed. */
#ifndef POLIS_TEST_CHECK_H
#define POLIS_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

/* atomic: a test may CHECK from a thread of its own (test_scene's drawer) */
static _Atomic int check_failures = 0;
static _Atomic int check_count = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        check_count++;                                                                             \
        if (check_a_ != check_b_) {                                                                \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %s (%lld vs %lld)\n", __FILE__,     \
                    __LINE__, #a, #b, check_a_, check_b_);                                         \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
    do {                                                                                           \
        const char *check_a_ = (a), *check_b_ = (b);                                               \
        check_count++;                                                                             \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                           \
            check_failures++;                                                                      \
            fprintf(stderr,                                                                        \
                    "%s:%d: CHECK_EQ_STR failed: %s == %s\n  got:      %s\n"                       \
                    "  expected: %s\n",                                                            \
                    __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",                    \
                    check_b_ ? check_b_ : "(null)");                                               \
        }                                                                                          \
    } while (0)

/* Substring check, for messages that contain absolute paths. */
#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *check_h_ = (hay), *check_n_ = (needle);                                        \
        check_count++;                                                                             \
        if (!check_h_ || !strstr(check_h_, check_n_)) {                                            \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK_CONTAINS failed:\n  in:   %s\n  want: %s\n", __FILE__,   \
                    __LINE__, check_h_ ? check_h_ : "(null)", check_n_);                           \
        }                                                                                          \
    } while (0)

#define CHECK_DONE()                                                                               \
    do {                                                                                           \
        fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);                    \
        return check_failures ? 1 : 0;                                                             \
    } while (0)

#endif
