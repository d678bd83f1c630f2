/*
 * blas_setup.h - make OpenBLAS use the right kernels, single-threaded.
 *
 * Debian's OpenBLAS 0.3.21 does not recognise recent CPU models and falls
 * back to its generic "Prescott" kernels, several times slower
 * (docs/performance.md, "The server's constants").  It reads
 * OPENBLAS_CORETYPE only when it loads, so the fix is to set it and re-exec
 * the process once.  The pool runs one BLAS call per worker thread, so BLAS
 * itself must not start threads of its own.
 */
#ifndef SERVER_BLAS_SETUP_H
#define SERVER_BLAS_SETUP_H

/* Re-executes argv with OPENBLAS_CORETYPE set when OpenBLAS picked a generic
 * kernel on a CPU that has AVX2 and nobody chose a core type.  Returns only
 * when no re-exec was needed (or it failed). */
void blas_setup_kernels(char **argv);

/* One BLAS thread per caller. */
void blas_setup_single_threaded(void);

/* "Haswell", "SkylakeX", ... as OpenBLAS reports it. */
const char *blas_setup_corename(void);

#endif
