/* Embeds the C++ engine from C99: lowers an ir_core kernel and prints its
 * LLVM IR, then shows how a rejected spec reports its reason.
 *
 * Run with LC_NUMERIC=de_DE.UTF-8 to see that the text does not depend on the
 * locale (the program calls setlocale(LC_ALL, "")). */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpp_engine/cpp_engine.h>
#include <cpp_engine/ir_core.h>

int main(void) {
    char reason[1024];
    cpe_output out;
    cpe_ir_core_spec spec;
    cpe_status st;

    setlocale(LC_ALL, "");
    fprintf(stderr, "cpp_engine %s\n", cpe_version());

    /* A valid spec: the LDS + barrier kernel, 256 work-items, at gfx1250 / llvm23. */
    spec = cpe_ir_core_spec_default();
    spec.kernel = "lds_barrier";
    spec.threads = 256;
    st = cpe_ir_core_lower(&spec, "gfx1250", "llvm23", &out, reason, sizeof reason);
    if (st != CPE_OK) {
        fprintf(stderr, "unexpected status %d: %s\n", (int)st, reason);
        return 1;
    }
    fprintf(stderr, "kernel: %s\n", out.kernel);
    fputs(out.text, stdout);
    cpe_output_free(&out);

    /* A rejected spec: workgroup clusters need flavor llvm23. */
    spec.cluster = 4;
    st = cpe_ir_core_lower(&spec, "gfx1250", "llvm22", &out, reason, sizeof reason);
    if (st != CPE_REJECTED) {
        fprintf(stderr, "expected a rejection, got status %d\n", (int)st);
        cpe_output_free(&out);
        return 1;
    }
    fprintf(stderr, "rejected: %s\n", reason);

    /* NULL kernel is JSON null: rejected by the family rule, not a crash. */
    spec = cpe_ir_core_spec_default();
    spec.kernel = NULL;
    st = cpe_ir_core_validate(&spec, "gfx1250", "llvm23", reason, sizeof reason);
    fprintf(stderr, "null kernel -> status %d: %s\n", (int)st, reason);
    if (st != CPE_REJECTED) return 1;

    /* A reason longer than the buffer: one call, then cpe_last_reason gives
     * the bytes the whole reason needs and copies it (the engine runs once). */
    {
        char small[32];
        char name[2049];
        char *whole;
        size_t need;
        memset(name, 'k', sizeof name - 1);
        name[sizeof name - 1] = '\0';
        spec.kernel = name; /* 2048 bytes: within CPE_MAX_STRING_BYTES, echoed in the reason */
        st = cpe_ir_core_validate(&spec, "gfx1250", "llvm23", small, sizeof small);
        need = cpe_last_reason(NULL, 0);
        whole = malloc(need);
        if (st != CPE_REJECTED || !whole) return 1;
        cpe_last_reason(whole, need);
        fprintf(stderr, "long reason: %zu bytes, buffer held %zu, whole ends ...%s\n", need - 1, strlen(small),
                whole + need - 1 - 12);
        free(whole);
    }
    return 0;
}
