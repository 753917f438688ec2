/*
 * floe.h leaves the program's own names alone: every name it defines carries the floe_ / FLOE_
 * prefix (check_names.py scans for the rest). Here, names a program may well use for itself,
 * among them BAD_UTF8, which floe.h once defined as a macro, and the other unprefixed names of
 * libfloe's status codes, compile after the header as an enum, a type and a function.
 */
#include <floe.h>
#include <stdio.h>

enum e {
    BAD_UTF8 = 3,
    OK,
    FAILED,
    PANICKED,
    UNSUPPORTED,
    BAD_INPUT,
    BAD_OUTPUT,
    CONFIG,
    UNKNOWN_PLUGIN,
    NULL_POINTER,
    BUFFER_SIZE,
    WRONG_HANDLE,
    IO,
    GPU,
    NOT_RESET,
    CANCELLED,
    NOT_BUILT,
    UNKNOWN,
    MOVES_END
};

typedef int status;
typedef struct pool { int size; } pool;

static int verdict(enum e x) { return x == BAD_UTF8 ? 0 : 1; }

int main(void) {
    pool p = {FLOE_STATUS_BAD_UTF8};
    status s = verdict(BAD_UTF8);
    if (p.size != 11 || s != 0 || NOT_BUILT != 19) {
        fprintf(stderr, "namespace: unexpected values\n");
        return 1;
    }
    printf("namespace: floe.h leaves BAD_UTF8 and the other unprefixed names to the program\n");
    return 0;
}
