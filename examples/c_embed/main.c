/* Embeds the C++ engine from C99: lowers an ir_core kernel and prints its
 * LLVM IR, then shows how a rejected spec reports its reason.
 *
 * Run with LC_NUMERIC=de_DE.UTF-8 to see that the text does not depend on the
 * locale (the program calls setlocale(LC_ALL, "")). */
#include <locale.h>
#include <stdio.h>

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
    return st == CPE_REJECTED ? 0 : 1;
}
