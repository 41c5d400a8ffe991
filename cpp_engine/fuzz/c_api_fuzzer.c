/* libFuzzer harness over the C API of cpp_engine (issue 14; docs/fuzz.md).
 *
 * Built by the CMake option CPP_ENGINE_FUZZ=ON with
 * -fsanitize=address,undefined,fuzzer (clang) and run by
 * scripts/fuzz_c_api.sh SECONDS. Plain C99, so it uses the API exactly as a
 * C program does.
 *
 * The input bytes choose a family, a flavor and an arch (a table name, NULL,
 * or raw bytes: non-UTF-8, control characters, long), then every member of
 * that family's spec struct, starting from its *_spec_default(): an int64_t
 * from a list of interesting values (0, +-1, limits, powers of two) or 8 raw
 * bytes; a string member the default, NULL, a known word, or raw bytes. Then
 * validate and lower run with reason buffers of several sizes (NULL, 0, 1,
 * 7, 1024 bytes) and the output is freed. Invariants, checked with abort():
 * validate and lower agree (both CPE_OK or the same reason), the status is
 * one of the enum's, a returned reason and text are NUL-terminated within
 * their buffers, a lowered module ends with a newline and has no NUL.
 * ASan/UBSan report memory errors, overflow and division by zero.
 * Every struct member is 8 bytes (const char * or int64_t), described per
 * family by a kinds string ('s' string, 'i' integer) in declaration order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cpp_engine/conv_abi.h>
#include <cpp_engine/conv_fwd_split_k_reduce.h>
#include <cpp_engine/conv_implicit_gemm.h>
#include <cpp_engine/conv_launch.h>
#include <cpp_engine/cpp_engine.h>
#include <cpp_engine/ir_core.h>
#include <cpp_engine/perf_model.h>
#include <cpp_engine/split_k_policy.h>

typedef struct {
    const uint8_t *p;
    size_t n;
} Bytes;

static uint8_t take_u8(Bytes *b) {
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

static int64_t take_i64(Bytes *b) {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | take_u8(b);
    return (int64_t)v;
}

/* Strings made during one input; freed at its end. */
#define MAX_STRS 64
static char *g_strs[MAX_STRS];
static int g_nstrs;

static const char *keep(char *s) {
    if (g_nstrs < MAX_STRS) {
        g_strs[g_nstrs++] = s;
        return s;
    }
    free(s);
    return "";
}

static const char *take_raw_string(Bytes *b) {
    size_t len = take_u8(b);
    if (len == 255) len = 255 + (size_t)take_u8(b) * 8; /* up to ~2 KiB */
    if (len > b->n) len = b->n;
    char *s = (char *)malloc(len + 1);
    if (!s) abort();
    memcpy(s, b->p, len);
    s[len] = '\0'; /* an embedded NUL just ends the C string early */
    b->p += len;
    b->n -= len;
    return keep(s);
}

static const char *const kWords[] = {
    "bf16", "fp16", "fp32", "mem", "wavelet", "default", "cshuffle", "identity", "bias", "scale", "relu",
    "clamp", "fwd", "bwd_data", "bwd_weight", "plain", "two_stage", "cluster", "reduce", "constants_f32",
    "constants_f16", "constants_bf16", "lds_barrier", "", "x", "BF16", "gfx1250", "llvm23", "a_b",
    "x\nkernel evil\naot yes", "\xc3\x28", "\xed\xa0\x80", "\xc2\x85", "\x7f", "\xf4\x90\x80\x80", "\xe0\x80\xaf",
};
static const char *const kFlavors[] = {"llvm20", "llvm22", "llvm23", "llvm24", "llvm21", "LLVM23", ""};
static const char *const kArches[] = {"gfx1250", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx90a", ""};
static const int64_t kInts[] = {
    0, 1, -1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 64, 65, 96, 128, 255, 256, 512, 1024, 1025, 4096, 65535,
    65536, 2147483647, 2147483648LL, -2147483647 - 1, 4294967295LL, 4294967296LL, INT64_MAX, INT64_MIN,
    INT64_MAX - 1, INT64_MIN + 1, 3037000499LL, 3037000500LL, -2, -1000, 1000000007,
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *take_name(Bytes *b, const char *const *table, size_t n) {
    uint8_t c = take_u8(b);
    if (c < 200) return table[c % n];
    if (c < 210) return NULL;
    return take_raw_string(b);
}

static void fill(Bytes *b, void *spec, const char *kinds) {
    unsigned char *base = (unsigned char *)spec;
    for (size_t i = 0; kinds[i]; ++i) {
        uint8_t c = take_u8(b);
        unsigned char *slot = base + 8 * i;
        if (c < 96) continue; /* keep the default */
        if (kinds[i] == 'i') {
            int64_t v = c < 224 ? kInts[c % N_OF(kInts)] : take_i64(b);
            if (c >= 160 && c < 192) {
                int64_t d;
                memcpy(&d, slot, 8);
                v = (int64_t)((uint64_t)d + (uint64_t)(int8_t)take_u8(b)); /* near the default */
            }
            memcpy(slot, &v, 8);
        } else {
            const char *s = c < 200 ? kWords[c % N_OF(kWords)] : c < 215 ? NULL : take_raw_string(b);
            memcpy(slot, &s, 8);
        }
    }
}

typedef cpe_status (*validate_fn)(const void *, const char *, const char *, char *, size_t);
typedef cpe_status (*lower_fn)(const void *, const char *, const char *, cpe_output *, char *, size_t);

/* One family: kinds, struct size, the default spec written into `spec`, the entry points. */
typedef struct {
    const char *kinds;
    size_t size;
    void (*defaults)(void *);
    validate_fn validate;
    lower_fn lower;
} Family;

/* Typed wrappers: calling through a cast function pointer is UB (UBSan's function check). */
#define FAMILY(name, type, prefix)                                                                       \
    static void name##_defaults(void *p) {                                                            \
        type s = prefix##_spec_default();                                                             \
        memcpy(p, &s, sizeof s);                                                                      \
    }                                                                                                 \
    static cpe_status name##_validate(const void *s, const char *a, const char *f, char *r, size_t n) { \
        return prefix##_validate((const type *)s, a, f, r, n);                                        \
    }                                                                                                 \
    static cpe_status name##_lower(const void *s, const char *a, const char *f, cpe_output *o, char *r, \
                                   size_t n) {                                                        \
        return prefix##_lower((const type *)s, a, f, o, r, n);                                        \
    }
FAMILY(ir_core, cpe_ir_core_spec, cpe_ir_core)
FAMILY(reduce, cpe_reduce_spec, cpe_reduce)
FAMILY(conv, cpe_conv_spec, cpe_conv)
FAMILY(abi, cpe_conv_abi_spec, cpe_conv_abi)
FAMILY(launch, cpe_conv_launch_spec, cpe_conv_launch)
FAMILY(policy, cpe_split_k_policy_spec, cpe_split_k_policy)
FAMILY(perf_model, cpe_perf_model_spec, cpe_perf_model)

#define CONV_KINDS "siiiiisisiisiis"
#define PROBLEM_KINDS "iiiiiiiiiiiiii"
#define ROW(name, type, kinds) {kinds, sizeof(type), name##_defaults, name##_validate, name##_lower}
static const Family kFamilies[] = {
    ROW(ir_core, cpe_ir_core_spec, "sii"),
    ROW(reduce, cpe_reduce_spec, "siii"),
    ROW(conv, cpe_conv_spec, CONV_KINDS),
    ROW(abi, cpe_conv_abi_spec, "ssi"),
    ROW(launch, cpe_conv_launch_spec, CONV_KINDS PROBLEM_KINDS "i"),
    ROW(policy, cpe_split_k_policy_spec, CONV_KINDS PROBLEM_KINDS "i"),
    ROW(perf_model, cpe_perf_model_spec, CONV_KINDS PROBLEM_KINDS "i"),
};

static void check_reason(const char *buf, size_t len) {
    if (buf && len && memchr(buf, '\0', len) == NULL) abort(); /* not NUL-terminated in its buffer */
}

static void check_status(cpe_status s) {
    if (s != CPE_OK && s != CPE_REJECTED && s != CPE_INTERNAL_ERROR) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Bytes b = {data, size};
    g_nstrs = 0;
    const Family *fam = &kFamilies[take_u8(&b) % N_OF(kFamilies)];
    if (strlen(fam->kinds) * 8 != fam->size) abort(); /* the kinds string is out of date */
    const char *flavor = take_name(&b, kFlavors, N_OF(kFlavors));
    const char *arch = take_name(&b, kArches, N_OF(kArches));
    unsigned char spec[512];
    fam->defaults(spec);
    fill(&b, spec, fam->kinds);

    static const size_t kLens[] = {0, 1, 7, 1024};
    const size_t rlen = kLens[take_u8(&b) % N_OF(kLens)];
    char small[1024], full[4096], full2[4096];
    memset(small, 'Z', sizeof small);
    cpe_status sv = fam->validate(spec, arch, flavor, rlen ? small : NULL, rlen);
    check_status(sv);
    if (sv != CPE_OK) check_reason(rlen ? small : NULL, rlen);

    full[0] = full2[0] = '\0';
    cpe_status v = fam->validate(spec, arch, flavor, full, sizeof full);
    cpe_output out = {NULL, NULL};
    cpe_status l = fam->lower(spec, arch, flavor, &out, full2, sizeof full2);
    check_status(v);
    check_status(l);
    if (v != sv) abort(); /* the reason buffer changed the outcome */
    if (v != l) abort(); /* validate and lower disagree */
    if (l == CPE_OK) {
        if (!out.kernel || !out.text) abort();
        size_t n = strlen(out.text);
        if (n == 0 || out.text[n - 1] != '\n') abort();
        if (out.kernel[0] == '\0') abort();
    } else {
        check_reason(full, sizeof full);
        check_reason(full2, sizeof full2);
        if (strcmp(full, full2) != 0) abort(); /* different reasons */
        if (out.kernel || out.text) abort();    /* nothing half-returned */
        if (l == CPE_INTERNAL_ERROR) abort();   /* an engine bug: any input is a rejection or a result */
    }
    cpe_output_free(&out);
    cpe_output_free(&out); /* idempotent */
    cpe_output_free(NULL);

    /* the flavor entry points take the same flavor */
    char canon[16];
    cpe_status r = cpe_resolve_flavor(flavor, canon, take_u8(&b) % 2 ? sizeof canon : 3, full, sizeof full);
    check_status(r);
    char *table = NULL;
    r = cpe_intrinsic_table_text(flavor, &table, full, sizeof full);
    check_status(r);
    if ((r == CPE_OK) != (table != NULL)) abort();
    cpe_free(table);

    for (int i = 0; i < g_nstrs; ++i) free(g_strs[i]);
    g_nstrs = 0;
    return 0;
}
