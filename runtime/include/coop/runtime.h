/* coop runtime: runs a planned training step (a Plan file) in one arena.
 *
 * A small C API in IREE's manner: every call that can fail returns a
 * coop_status_t, NULL on success; a failed call returns a status that owns
 * its message and must be freed with coop_status_free. Handles are opaque.
 * No C++ exception crosses this API. See docs/runtime.md. */
#ifndef COOP_RUNTIME_H
#define COOP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum coop_status_code_e {
  COOP_STATUS_OK = 0,
  COOP_STATUS_INVALID_ARGUMENT = 1, /* a caller's value is wrong */
  COOP_STATUS_INVALID_PLAN = 2,     /* the Plan file is truncated, corrupt or inconsistent */
  COOP_STATUS_UNIMPLEMENTED = 3,    /* a kernel or backend that does not exist */
  COOP_STATUS_NOT_FOUND = 4,        /* a file or an argument name */
  COOP_STATUS_OUT_OF_MEMORY = 5,    /* the arena cannot be allocated */
  COOP_STATUS_FAILED_PRECONDITION = 6, /* e.g. running before every argument is bound */
  COOP_STATUS_INTERNAL = 7,
} coop_status_code_t;

typedef struct coop_status_s *coop_status_t; /* NULL means OK */

coop_status_code_t coop_status_code(coop_status_t status);
/* The message; valid until coop_status_free. "OK" for NULL. */
const char *coop_status_message(coop_status_t status);
void coop_status_free(coop_status_t status);

/* Element types: the values of the Plan's DType enum. */
typedef enum coop_dtype_e {
  COOP_DTYPE_FLOAT32 = 1,
  COOP_DTYPE_FLOAT16 = 2,
  COOP_DTYPE_BFLOAT16 = 3,
  COOP_DTYPE_FLOAT64 = 4,
  COOP_DTYPE_INT64 = 5,
  COOP_DTYPE_INT32 = 6,
  COOP_DTYPE_INT16 = 7,
  COOP_DTYPE_INT8 = 8,
  COOP_DTYPE_UINT8 = 9,
  COOP_DTYPE_BOOL = 10,
  COOP_DTYPE_COMPLEX64 = 11,
} coop_dtype_t;

/* Roles: the values of the Plan's Role enum. */
typedef enum coop_role_e {
  COOP_ROLE_PARAMETER = 1,
  COOP_ROLE_GRADIENT = 2,
  COOP_ROLE_OPTIMIZER_STATE = 3,
  COOP_ROLE_BUFFER = 4,
  COOP_ROLE_INPUT = 5,
} coop_role_t;

#define COOP_MAX_RANK 8

/* A step argument or output as the caller sees it: contiguous, row-major. */
typedef struct coop_tensor_info_s {
  const char *name; /* owned by the plan; "" for outputs */
  coop_role_t role; /* 0 for outputs */
  coop_dtype_t dtype;
  int32_t rank;
  int64_t shape[COOP_MAX_RANK];
  size_t byte_size;
} coop_tensor_info_t;

/* The CPU reference backend's kernels, the runtime's kernel registry:
 * `index` from 0 to coop_kernel_count() - 1 gives a name ("aten.addmm",
 * "aten.add_.Tensor"; a name without overload covers every overload),
 * NULL past the end. Static strings. */
size_t coop_kernel_count(void);
const char *coop_kernel_name(size_t index);

typedef struct coop_plan_s coop_plan_t;
typedef struct coop_session_s coop_session_t;

/* Loads and verifies a Plan file (the Plan with its length and checksum)
 * before anything is allocated: every buffer in the arena and its storage
 * (overflow-checked), every launch reading whole values that no other
 * write has touched, the arguments disjoint and still whole after the step,
 * every argument as its kernel's schema declares, every kernel implemented
 * by the CPU reference backend and accepting its operands. The first
 * violation is an INVALID_PLAN naming the launch, kernel and buffers
 * (docs/runtime.md, "What the runtime proves before it runs a plan"). */
coop_status_t coop_plan_load_file(const char *path, coop_plan_t **out_plan);
coop_status_t coop_plan_load_bytes(const void *data, size_t size,
                                   coop_plan_t **out_plan);
void coop_plan_release(coop_plan_t *plan);

const char *coop_plan_name(const coop_plan_t *plan);
int64_t coop_plan_arena_bytes(const coop_plan_t *plan);
size_t coop_plan_launch_count(const coop_plan_t *plan);
/* The highest arena byte any buffer of the plan reaches. */
int64_t coop_plan_high_water_mark(const coop_plan_t *plan);
/* Launch `index`'s kernel ("aten.addmm") and operand signatures in the
 * cost model's profile-table form ("128xf32,1024x256xf32,256x128xf32",
 * "-" without operands; docs/cost-model.md); NULL past the end. Owned by
 * the plan. */
const char *coop_plan_launch_kernel(const coop_plan_t *plan, size_t index);
const char *coop_plan_launch_signature(const coop_plan_t *plan, size_t index);
size_t coop_plan_argument_count(const coop_plan_t *plan);
coop_status_t coop_plan_argument_info(const coop_plan_t *plan, size_t index,
                                      coop_tensor_info_t *out_info);
coop_status_t coop_plan_find_argument(const coop_plan_t *plan, const char *name,
                                      size_t *out_index);
/* Whether `backend` ("cpu", "cuda") runs every launch of the plan: creates
 * the backend (a device backend needs its device) but no arena, and names
 * every kernel it lacks. */
coop_status_t coop_plan_check_backend(const coop_plan_t *plan, const char *backend);
size_t coop_plan_output_count(const coop_plan_t *plan);
coop_status_t coop_plan_output_info(const coop_plan_t *plan, size_t index,
                                    coop_tensor_info_t *out_info);

/* A session owns the arena: one allocation of the plan's arena_bytes on
 * `backend` ("cpu", or "cuda" in a build with the CUDA backend; a kernel
 * the backend lacks is UNIMPLEMENTED, named, before the arena exists). The plan must outlive the session. Arguments start
 * unbound; every argument must be bound (or initialized) before a step. */
coop_status_t coop_session_create(const coop_plan_t *plan, const char *backend,
                                  coop_session_t **out_session);
void coop_session_release(coop_session_t *session);

/* Copies `data` (contiguous, row-major) into argument `index` after
 * checking dtype, rank, shape and byte size; nothing is written on error. */
coop_status_t coop_session_bind_argument(coop_session_t *session, size_t index,
                                         coop_dtype_t dtype, int32_t rank,
                                         const int64_t *shape, const void *data,
                                         size_t byte_size);
coop_status_t coop_session_bind_argument_by_name(
    coop_session_t *session, const char *name, coop_dtype_t dtype, int32_t rank,
    const int64_t *shape, const void *data, size_t byte_size);
/* Binds every argument from the initial values of an exported
 * TrainingGraph file, matched by name (shape and dtype checked). All or
 * nothing: on error no argument is written. */
coop_status_t coop_session_init_from_training_graph(coop_session_t *session,
                                                    const char *path);
/* Seeded deterministic init: floating parameters uniform in [-0.1, 0.1),
 * integer inputs uniform in [0, 2) ... see docs/runtime.md; optimizer
 * state, gradients and buffers zero (variances one). */
coop_status_t coop_session_init_random(coop_session_t *session, uint64_t seed);

/* Runs `steps` training steps. No memory is allocated while they run. */
coop_status_t coop_session_run(coop_session_t *session, int64_t steps);

/* The step index: how many steps the session counts as run, 0 when it is
 * created; each step run (or profiled) adds one. Step s's random kernels
 * draw fresh values from it (docs/runtime.md), so a session that resumes
 * training from saved arguments sets the index to the steps run before and
 * draws what an uninterrupted session would have. The optimizer's own
 * step counter is an argument (bound like the rest of its state). */
coop_status_t coop_session_set_step_index(coop_session_t *session, int64_t step);
int64_t coop_session_step_index(const coop_session_t *session);

/* Profile mode: runs one training step in which every launch runs
 * 1 + `repeat` times, a warm-up and `repeat` timed runs; the storages the
 * launch writes are restored (host copies) before each run after the
 * first, so the step computes exactly what coop_session_run computes.
 * out_us[i] gets launch i's median time in microseconds; `count` must be
 * coop_plan_launch_count. Allocates host memory (unlike a plain step). */
coop_status_t coop_session_profile(coop_session_t *session, int32_t repeat,
                                   double *out_us, size_t count);

coop_status_t coop_session_read_argument(const coop_session_t *session,
                                         size_t index, void *out,
                                         size_t byte_size);
coop_status_t coop_session_read_output(const coop_session_t *session,
                                       size_t index, void *out,
                                       size_t byte_size);

typedef struct coop_session_stats_s {
  int64_t arena_bytes;
  int64_t high_water_mark;   /* highest arena byte the plan touches */
  int64_t device_allocations; /* allocations the backend has made */
  int64_t steps;              /* the step index (coop_session_step_index) */
  int64_t launches;           /* kernel launches so far */
  double last_step_ms;        /* the last step's time on the backend's clock
                                 (CUDA: events on its stream); in profile
                                 mode the sum of the launches' medians */
} coop_session_stats_t;
void coop_session_stats(const coop_session_t *session,
                        coop_session_stats_t *out_stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* COOP_RUNTIME_H */
