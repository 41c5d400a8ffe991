/* Prints the structured launch plan (cpe_conv_launch_lower_plan) of each spec
 * read from stdin, one spec per line as `field=value` words (fields of
 * cpe_conv_launch_spec; the rest keep cpe_conv_launch_spec_default's values).
 * Output per spec, one JSON object per line:
 *   {"status":0,"kernel":...,"variant":...,"degree":...,...,"args":[[name,kind,value,tensor],...],...}
 * or {"status":1,"reason":"..."} when the launch is not admitted.
 * Used by tests/test_c_launch_plan.py to compare with the Python engine's plan. */
#include <cpp_engine/conv_launch.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *name; size_t off; int is_str; } field;

#define I(f) {#f, offsetof(cpe_conv_launch_spec, f), 0}
#define S(f) {#f, offsetof(cpe_conv_launch_spec, f), 1}
static const field FIELDS[] = {
    S(dtype), I(tile_m), I(tile_n), I(tile_k), I(waves_m), I(waves_n), S(pipeline), I(num_load_waves),
    S(epilogue), I(vector_a), I(vector_b), S(acc_epilogue), I(split_k), I(split_k_cluster), S(name_prefix),
    I(N), I(C), I(H), I(W), I(K), I(Y), I(X), I(stride_h), I(stride_w), I(pad_h), I(pad_w), I(dil_h), I(dil_w),
    I(groups), I(degree)};

static void put_str(const char *s) {
    putchar('"');
    for (; s && *s; ++s) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static void put_args(const cpe_launch_arg *a, size_t n) {
    size_t i;
    putchar('[');
    for (i = 0; i < n; ++i) {
        printf(i ? ",[" : "[");
        put_str(a[i].name);
        printf(",%d,%lld,", (int)a[i].kind, (long long)a[i].value);
        if (a[i].tensor) put_str(a[i].tensor); else printf("null");
        putchar(']');
    }
    putchar(']');
}

int main(void) {
    static char line[8192];
    static char strings[64][256];
    while (fgets(line, sizeof line, stdin)) {
        cpe_conv_launch_spec spec = cpe_conv_launch_spec_default();
        cpe_conv_launch_plan plan;
        char reason[1024];
        int nstr = 0;
        char *tok = strtok(line, " \n");
        cpe_status st;
        for (; tok; tok = strtok(NULL, " \n")) {
            char *eq = strchr(tok, '=');
            size_t k;
            if (!eq) return 3;
            *eq = '\0';
            for (k = 0; k < sizeof FIELDS / sizeof FIELDS[0]; ++k)
                if (strcmp(FIELDS[k].name, tok) == 0) break;
            if (k == sizeof FIELDS / sizeof FIELDS[0]) { fprintf(stderr, "unknown field %s\n", tok); return 3; }
            if (FIELDS[k].is_str) {
                if (nstr == 64) return 3;
                strncpy(strings[nstr], eq + 1, sizeof strings[nstr] - 1);
                *(const char **)((char *)&spec + FIELDS[k].off) = strings[nstr++];
            } else {
                *(int64_t *)((char *)&spec + FIELDS[k].off) = (int64_t)strtoll(eq + 1, NULL, 10);
            }
        }
        st = cpe_conv_launch_lower_plan(&spec, "gfx1250", "llvm23", &plan, reason, sizeof reason);
        if (st != CPE_OK) {
            printf("{\"status\":%d,\"reason\":", (int)st);
            put_str(reason);
            printf("}\n");
            continue;
        }
        printf("{\"status\":0,\"kernel\":");
        put_str(plan.kernel);
        printf(",\"variant\":");
        put_str(plan.variant);
        printf(",\"degree\":%lld,\"ks\":%lld,\"ks_count\":%lld,\"data_slices\":%lld,"
               "\"grid\":[%lld,%lld,%lld],\"block\":[%lld,%lld,%lld],\"lds_bytes\":%lld,"
               "\"cluster\":[%lld,%lld,%lld],\"workspace_bytes\":%lld,\"needs_stage2\":%d,\"args\":",
               (long long)plan.degree, (long long)plan.ks, (long long)plan.ks_count, (long long)plan.data_slices,
               (long long)plan.grid[0], (long long)plan.grid[1], (long long)plan.grid[2],
               (long long)plan.block[0], (long long)plan.block[1], (long long)plan.block[2],
               (long long)plan.lds_bytes, (long long)plan.cluster[0], (long long)plan.cluster[1],
               (long long)plan.cluster[2], (long long)plan.workspace_bytes, plan.needs_stage2);
        put_args(plan.args, plan.num_args);
        printf(",\"stage2_args\":");
        put_args(plan.stage2_args, plan.num_stage2_args);
        printf("}\n");
        cpe_conv_launch_plan_free(&plan);
        if (plan.kernel != NULL || plan.args != NULL) return 4;  /* free zeroes the plan */
    }
    return 0;
}
