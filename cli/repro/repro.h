/*
 * cudnnspy repro (docs/repro.md): writes a standalone C program that replays
 * one recorded cuDNN call. Three parts, one job each:
 *   repro-api.c    what the generator knows of cuDNN: the Set functions that
 *                  build each kind of descriptor, the calls it can replay and
 *                  the role of each of their parameters, data type sizes;
 *   repro.c        the command: reads the records, picks the call, gathers
 *                  what it needs into a struct repro_plan;
 *   repro-write.c  writes the C file from the plan;
 *   repro-host.c   any other call, from the API description alone: one whose
 *                  arguments the records hold whole, device data sized by
 *                  the descriptor or count beside it.
 * Only repro.c, repro-write.c, repro-graph.c, repro-host.c and repro-desc.c see jansson.
 */
#ifndef CUDNNSPY_REPRO_H
#define CUDNNSPY_REPRO_H

#include <stddef.h>
#include <stdio.h>

/* The kinds of legacy descriptors the generator recreates. */
enum repro_kind { RK_TENSOR, RK_FILTER, RK_CONVOLUTION, RK_ACTIVATION, RK_COUNT };

struct repro_kind_info {
	const char *prefix;	/* of the spy's ids: "tensor" in "tensor#3" */
	const char *ctype;	/* cudnnTensorDescriptor_t */
	const char *create, *destroy;
};
extern const struct repro_kind_info repro_kinds[RK_COUNT];

/* What a parameter is to the replay. */
enum repro_role {
	RP_HANDLE,
	RP_DESC,	/* a descriptor of kind `ref` */
	RP_DATA_IN,	/* device data described by parameter `ref`, read by the call */
	RP_DATA_OUT,	/* device data written by the call */
	RP_WORKSPACE,	/* device memory of the size in parameter `ref` */
	RP_SIZE,	/* size_t by value */
	RP_ALPHA,	/* a host scaling factor: 1 */
	RP_BETA,	/* a host scaling factor: 0 */
	RP_ENUM,	/* ctype names the enum */
	RP_INT,
	RP_DOUBLE,
	RP_INT_ARRAY,	/* const int[], its length in parameter `ref` */
	RP_OUT_INT,	/* int *, written by the call */
	RP_OUT_SIZE,	/* size_t *, written by the call */
	RP_PERF,	/* an array of ctype, `ref` the requested count */
};

struct repro_param {
	const char *name;	/* as in cuDNN's headers and the records */
	enum repro_role role;
	int ref;
	const char *ctype;
};

#define REPRO_MAX_PARAMS 20

enum repro_fn_class {
	RF_SET,		/* gives a descriptor its shape: the last one counts */
	RF_SETTING,	/* a single value beside the shape (math type, group count) */
	RF_CALL,	/* a call the generator replays */
};

struct repro_fn {
	const char *name;
	enum repro_fn_class cls;
	int kind;		/* RF_SET, RF_SETTING: the descriptor's kind */
	const char *beside;	/* RF_SETTING: the field name in failure records ("mathType") */
	const char *search_op;	/* RF_CALL: "fwd", "bwd-data", "bwd-filter" for a search, or NULL */
	const char *op;		/* RF_CALL: the convolution it runs, whose search it follows, or NULL */
	int nparams;
	struct repro_param params[REPRO_MAX_PARAMS];
};

/* The function of that name, or NULL. */
const struct repro_fn *
repro_fn_find(const char *name);

/* The function whose failure-record field `beside` it sets, for a descriptor of `kind`. */
const struct repro_fn *
repro_setting_for(int kind, const char *beside);

/* Bytes of one element of a cudnnDataType_t named NAME; 0 when unknown. */
size_t
repro_elem_size(const char *name);

/* How the generated program fills and reads an element of that type. */
const char *
repro_elem_kind(const char *name);

/* One recreated descriptor. */
struct repro_desc {
	char id[40];		/* "tensor#3" */
	char var[48];		/* its variable in the program: tensor_3 */
	int kind;
	void *sets;		/* json_t array of {"fn", "args"}, in the order they are replayed */
	const char *dtype;	/* its data type's name, from the shape Set; NULL for convolutions */
	unsigned long long elems;	/* elements spanned (tensors, filters); 0 when unknown */
	unsigned long long bytes;
	char shape[160];	/* "8x16x32x32" for comments */
};

/* One device buffer: every parameter recorded at the same address shares it. */
struct repro_buffer {
	unsigned long long addr;
	char var[48];
	unsigned long long bytes;	/* the most any user of it needs */
	unsigned offset;	/* addr modulo 256, reproduced past cudaMalloc's alignment */
	int input;		/* filled before the call */
	const char *dtype;	/* the first input's data type, for the fill; NULL: bytes */
	unsigned long long elems;
	char users[160];	/* "x, w" */
};

#define REPRO_MAX_DESCS 16
#define REPRO_MAX_BUFS 16

enum repro_fill { FILL_PATTERN, FILL_NAN, FILL_ZERO, FILL_RANDOM };

struct repro_plan {
	const struct repro_fn *fn;
	void *record;		/* json_t: the call or failure record */
	void *search;		/* json_t: a traced search call that came before, with the same descriptors */
	void *graph_calls;	/* json_t array: the graph API's backend calls to replay, in order; NULL for legacy */
	void *graph_types;	/* json_t object: each backend descriptor's type, by id */
	int graph_steps;	/* how many build steps repro-graph.c wrote */
	int graph_rebuilt;	/* the calls were made up: 1 from the failure and graph records, 2 from the failure's descriptor */
	int graph_no_handle;	/* no backend call replayed names a handle */
	int failure;		/* a failure record */
	long long status;
	const char *status_name;
	const char *message;
	int handle_null;	/* the program passed a NULL handle */
	const char *stream;	/* the stream the program had set, or NULL */
	struct repro_desc descs[REPRO_MAX_DESCS];
	int ndescs;
	struct repro_buffer bufs[REPRO_MAX_BUFS];
	int nbufs;
	/* Where it came from. */
	const char *file;
	long long record_no, call_no, failure_no;
	const char *program, *host, *lib_path, *cudart_path;
	long long pid, lib_version;
	enum repro_fill fill;
	int time_default;	/* the program times the call without being asked */
	const char *build;	/* the command that builds it */
	char exe[256];		/* the program it builds */
	const char *out_name;	/* the file written, or NULL for stdout */
	void *hplan;		/* repro-host.c's plan, for a call outside the table (fn is NULL then) */
};

/*
 * repro-common.c: the buffer of a pointer recorded at ADDR, added or joined
 * (the same address is the same memory); -1 when there are too many.
 */
int
repro_add_buffer(struct repro_plan *p, const char *param, unsigned long long addr, unsigned long long bytes,
		 int input, const char *dtype, unsigned long long elems);

/*
 * repro-graph.c, the graph API: from the traced backend calls (a json_t
 * array, in record order) the ones that build what the execution TARGET
 * uses, its buffers from the variant pack; 0, or -1 after a message.
 */
int
repro_graph_plan(struct repro_plan *p, void *calls, void *target);

/* What a tensor or filter shape Set says (repro-desc.c): its data type, the elements it spans, its dims. */
struct repro_shape {
	const char *dtype;
	unsigned long long elems;
	long long dims[8];
	int nd;
};

/* SET (json_t, {"fn", "args"}): 1 when it is no shape Set, 0 with *SH, -1 with WHY when the record lacks it. */
int
repro_shape_of(void *set, struct repro_shape *sh, char *why, size_t cap);

/*
 * repro-graph.c: for an execution whose backend calls were not traced, the
 * calls made up from its failure record (the plan's engine and knobs) and
 * its operation graph's `graph` record (json_t); a new json_t array, or NULL
 * after a message.
 */
void *
repro_graph_rebuild(void *target, void *graph);

/*
 * repro-graph.c: for a failed cudnnBackendSetAttribute or GetAttribute whose
 * descriptor's calls were not traced, the calls that make that descriptor
 * again from the failure record (its type and attributes, finalized as it
 * was), or, for an engine config cuDNN filled from a heuristics query, from
 * CONFIGS (json_t: by config id, its engine, knobs and graph) and GRAPHS
 * (json_t: graph records by id); a new json_t array, or NULL after a message.
 */
void *
repro_graph_rebuild_desc(void *target, void *configs, void *graphs);

/* Whether FN runs an execution plan: cudnnBackendExecute, cudnnBackendPopulateCudaGraph, ...UpdateCudaGraph. */
int
repro_graph_execution(const char *fn);

/* Whether FN is a graph API call repro replays as one descriptor's (SetAttribute, GetAttribute, Finalize,
 * Initialize). */
int
repro_graph_on_desc(const char *fn);

/* repro-graph.c: the program's descriptors, steps and call; the steps' calls in main. */
int
repro_graph_write(const struct repro_plan *p, FILE *out);

void
repro_graph_write_main(const struct repro_plan *p, FILE *out);

/*
 * repro-signature.c: the call's convolution signature, as the spy writes it
 * (docs/output-format.md); 0, or -1 for a call that has none.
 */
int
repro_signature(const struct repro_plan *p, char *out, size_t cap);

/* The operation and the parameters that are x, w and y of a legacy convolution function; -1 for others. */
int
repro_sig_params(const char *fn, const char **op, const char **x, const char **w, const char **y);

/* Whether SIG is what PATTERN says, where "..." in PATTERN stands for anything. */
int
repro_signature_matches(const char *sig, const char *pattern);

/*
 * repro-desc.c: the Set call of a descriptor of KIND rebuilt from the spy's
 * summary DESC, as {"fn", "args", "desc", "guess"} (json_t); NULL when the
 * summary is not one it reads.
 */
void *
repro_set_from_desc(int kind, const char *id, const char *desc);

/*
 * repro-desc.c: 1 when VALUE (json_t), given to parameter PARAM of the Set
 * FN, is what cuDNN holds in a new descriptor (the API description's
 * default=): the spy's records show those for a descriptor the program never
 * set them on, and a repro does not make a call the program did not.
 */
int
repro_is_default(const char *fn, const char *param, const void *value);

/* repro-common.c: an integer as a C literal of a type that holds it. */
void
repro_int(FILE *out, long long v);

/* repro-common.c: text for a C comment (printable, never its end). */
void
repro_comment(FILE *out, const char *s);

/* 1 when `id` is a descriptor id as the spy writes them: lowercase kind, '#', a number from 1. */
int
repro_id_ok(const char *id);

/* 1 when `word` names a cuDNN function, enum or enum value the API description knows: a token repro may write. */
int
repro_cudnn_word(const char *word);

/* 1 when `word` is a value of the enum named `type` (cudnnDataType_t): what an enum argument may be written as. */
int
repro_enum_word(const char *type, const char *word);

/* Text from the records on a terminal line: printable ASCII, other bytes as \ooo, so one record stays one line. */
void
repro_text(FILE *out, const char *s);

/*
 * repro-host.c: whether the call of record RECORD (json_t) is one repro can
 * replay from the API description alone; 0, or -1 with why in WHY.
 */
int
repro_host_can(const char *fn, void *record, char *why, size_t cap);

/* repro-host.c: whether its replay needs a handle (and so a GPU). */
int
repro_host_needs_handle(void *record);

/*
 * repro-host.c: the plan of p->record: the descriptors it names, each with
 * the Set calls that give it its state, from the record and STATES (json_t:
 * each descriptor id's Set calls as the reader saw them); 0, or -1 after a
 * message.
 */
int
repro_host_plan(struct repro_plan *p, void *states);

/* repro-host.c: whether the plan of RECORD can be made; 0, or -1 with why in WHY (nothing said). */
int
repro_host_try(void *record, void *states, char *why, size_t cap);
/* Whether the call's replay gives it device memory (an address the program gave for device data): it needs a
 * GPU, or a CUDA runtime that gives memory. */
int
repro_host_device_data(void *record);

void
repro_host_free(struct repro_plan *p);

/* repro-host.c: writes its program; 0, or -1 after a message. */
int
repro_host_write(const struct repro_plan *p, FILE *out);

/* repro-write.c: the generated programs' print_status, a status in words with cuDNN's own message. */
extern const char repro_print_status[];

/* repro-write.c: the opening comment's line of the recorded message: cuDNN's, or, for a status the spy injected
 * (CUDNNSPY_INJECT), that it was injected, by which rule, and the rule that injects it into this program's call
 * (BEFORE: the calls of the same function the program makes before it). */
void
repro_write_message(FILE *out, const struct repro_plan *p, int before);

/* repro-write.c: the opening comment's "Called from Python:" lines, from a record's "python" (json_t). */
void
repro_write_python(FILE *out, void *frames);

/* Writes the program; 0, or -1 after a message. */
int
repro_write(const struct repro_plan *p, FILE *out);

/* `cudnnspy repro ARGS...`: ARGV holds the arguments after "repro". */
int
cudnnspy_repro_main(int argc, char **argv);

#endif
