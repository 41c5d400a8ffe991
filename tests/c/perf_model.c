/* Prints the perf_model text (cpe_perf_model_lower) of each spec read from
 * stdin, one spec per line as `field=value` words (integer fields of
 * cpe_perf_model_spec; the rest keep cpe_perf_model_spec_default's values),
 * for the arch and flavor given as argv[1], argv[2]. Output per spec, one JSON
 * object per line: {"status":0,"kernel":...,"text":...} or
 * {"status":1,"reason":...}. Used by tests/test_perf_model.py. */
#include <cpp_engine/perf_model.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *name; size_t off; } field;

#define I(f) {#f, offsetof(cpe_perf_model_spec, f)}
static const field FIELDS[] = {
    I(tile_m), I(tile_n), I(tile_k), I(waves_m), I(waves_n), I(num_load_waves), I(vector_a), I(vector_b),
    I(split_k), I(split_k_cluster), I(N), I(C), I(H), I(W), I(K), I(Y), I(X), I(stride_h), I(stride_w),
    I(pad_h), I(pad_w), I(dil_h), I(dil_w), I(groups), I(cus), I(rules)};

static void put_str(const char *s) {
    putchar('"');
    for (; s && *s; ++s) {
        if (*s == '"' || *s == '\\') { putchar('\\'); putchar(*s); }
        else if (*s == '\n') printf("\\n");
        else putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    static char line[8192];
    if (argc != 3) return 2;
    while (fgets(line, sizeof line, stdin)) {
        cpe_perf_model_spec spec = cpe_perf_model_spec_default();
        char reason[1024];
        cpe_output out;
        cpe_status st;
        char *tok;
        for (tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
            char *eq = strchr(tok, '=');
            size_t i;
            if (!eq) return 3;
            *eq = '\0';
            for (i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; ++i)
                if (strcmp(FIELDS[i].name, tok) == 0) break;
            if (i == sizeof FIELDS / sizeof FIELDS[0]) return 4;
            *(int64_t *)((char *)&spec + FIELDS[i].off) = strtoll(eq + 1, NULL, 10);
        }
        st = cpe_perf_model_lower(&spec, argv[1], argv[2], &out, reason, sizeof reason);
        if (st == CPE_OK) {
            printf("{\"status\":0,\"kernel\":");
            put_str(out.kernel);
            printf(",\"text\":");
            put_str(out.text);
            printf("}\n");
            cpe_output_free(&out);
        } else {
            printf("{\"status\":%d,\"reason\":", (int)st);
            put_str(reason);
            printf("}\n");
        }
    }
    return 0;
}
