/* c_emit.c -- IR text throughput of the C++ engine from C (issue 25, item 4).
 *
 *     c_emit UNITS_FILE ROUNDS
 *
 * UNITS_FILE holds one conv_implicit_gemm unit per line, tab-separated:
 * arch, flavor, then `field=value` pairs of cpe_conv_spec (fields not given
 * keep cpe_conv_spec_default(); `field=` with nothing after it is NULL for a
 * string field). bench/c_emit.py writes it from the gate's configs.
 *
 * Lowers every unit ROUNDS times through cpe_conv_lower (each call's output is
 * freed with cpe_output_free, as a C caller would) and prints one line:
 *
 *     bytes=<IR bytes of one pass> kernels=<units lowered> rejected=<units refused> rounds=<ROUNDS> cpu_s=<s> wall_s=<s>
 *
 * cpu_s is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over all
 * rounds, wall_s the monotonic wall time; the driver turns them into MB/s.
 * A unit the library refuses (an older engine, e.g. the base commit's, may
 * not know a spec value) is left out of the timed rounds and counted in
 * `rejected`. Exit 2 with one `error:` line on a malformed units file or
 * when every unit is refused.
 * Plain C99 + POSIX clock_gettime.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpp_engine/conv_implicit_gemm.h"

enum kind { K_STR, K_INT };

struct field {
    const char *name;
    enum kind kind;
    size_t offset;
};

#define F(n, k) {#n, k, offsetof(cpe_conv_spec, n)}
static const struct field kFields[] = {
    F(dtype, K_STR),          F(tile_m, K_INT),  F(tile_n, K_INT),       F(tile_k, K_INT),
    F(waves_m, K_INT),        F(waves_n, K_INT), F(pipeline, K_STR),     F(num_load_waves, K_INT),
    F(epilogue, K_STR),       F(vector_a, K_INT), F(vector_b, K_INT),    F(acc_epilogue, K_STR),
    F(split_k, K_INT),        F(split_k_cluster, K_INT), F(name_prefix, K_STR),
};
#undef F

struct unit {
    cpe_conv_spec spec;
    char *arch;
    char *flavor;
};

static void die(const char *what, const char *detail) {
    fprintf(stderr, "error: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (!p) die("out of memory", NULL);
    memcpy(p, s, n);
    return p;
}

/* Set one `name=value` pair on `spec`; the value string is kept (strdup'd). */
static void set_field(cpe_conv_spec *spec, char *pair) {
    char *eq = strchr(pair, '=');
    if (!eq) die("units file: a field is not name=value", pair);
    *eq = '\0';
    const char *value = eq + 1;
    for (size_t i = 0; i < sizeof kFields / sizeof kFields[0]; ++i) {
        if (strcmp(kFields[i].name, pair) != 0) continue;
        char *at = (char *)spec + kFields[i].offset;
        if (kFields[i].kind == K_STR) {
            const char *v = *value ? dup_str(value) : NULL;
            memcpy(at, &v, sizeof v);
        } else {
            char *end = NULL;
            int64_t v = (int64_t)strtoll(value, &end, 10);
            if (!*value || *end) die("units file: an integer field is not an integer", value);
            memcpy(at, &v, sizeof v);
        }
        return;
    }
    die("units file: not a field of cpe_conv_spec", pair);
}

static size_t read_units(const char *path, struct unit **out) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open units file", path);
    size_t n = 0, cap = 0;
    struct unit *units = NULL;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!*line) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            units = realloc(units, cap * sizeof *units);
            if (!units) die("out of memory", NULL);
        }
        struct unit *u = &units[n++];
        u->spec = cpe_conv_spec_default();
        char *save = NULL;
        char *tok = strtok_r(line, "\t", &save);
        if (!tok) die("units file: a line has no arch", NULL);
        u->arch = dup_str(tok);
        tok = strtok_r(NULL, "\t", &save);
        if (!tok) die("units file: a line has no flavor", NULL);
        u->flavor = dup_str(tok);
        while ((tok = strtok_r(NULL, "\t", &save))) set_field(&u->spec, tok);
    }
    fclose(f);
    *out = units;
    return n;
}

static double seconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 3) die("usage", "c_emit UNITS_FILE ROUNDS");
    char *end = NULL;
    long rounds = strtol(argv[2], &end, 10);
    if (!*argv[2] || *end || rounds < 1) die("ROUNDS must be an integer >= 1", argv[2]);
    struct unit *units = NULL;
    size_t n = read_units(argv[1], &units);
    if (n == 0) die("units file has no unit", argv[1]);

    char reason[512];
    size_t bytes = 0, kept = 0;
    for (size_t i = 0; i < n; ++i) {  /* one untimed pass: keeps the units that lower, counts their bytes */
        cpe_output out;
        if (cpe_conv_lower(&units[i].spec, units[i].arch, units[i].flavor, &out, reason, sizeof reason) != CPE_OK)
            continue;
        bytes += strlen(out.text);
        cpe_output_free(&out);
        units[kept++] = units[i];
    }
    if (kept == 0) die("every unit was rejected; the last reason", reason);
    const size_t rejected = n - kept;
    n = kept;
    const double c0 = seconds(CLOCK_THREAD_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
    for (long r = 0; r < rounds; ++r) {
        for (size_t i = 0; i < n; ++i) {
            cpe_output out;
            if (cpe_conv_lower(&units[i].spec, units[i].arch, units[i].flavor, &out, reason, sizeof reason) != CPE_OK)
                die("unit rejected", reason);
            cpe_output_free(&out);
        }
    }
    const double cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - c0, wall = seconds(CLOCK_MONOTONIC) - w0;
    printf("bytes=%zu kernels=%zu rejected=%zu rounds=%ld cpu_s=%.6f wall_s=%.6f\n", bytes, n, rejected, rounds, cpu,
           wall);
    return 0;
}
