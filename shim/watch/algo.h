/*
 * Convolution signatures and the algorithms chosen for them (algo.c), for
 * the legacy API and, through backend.c, the graph API: searches, choices,
 * findings, and the `algo` records and stderr section at exit.
 */
#ifndef SPY_ALGO_H
#define SPY_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "sigtext.h"
#include "spy.h"

/* slowpath.c, once: flags the convolution functions whose successes the spy watches (SPY_FN_WATCH). */
void spy_algo_flags_init(void);
/* slowpath.c: a watched convolution call returned (any status), before its record is written. */
void spy_algo_call(struct spy_call *c, long status, const union spy_arg *args);
/* gpu.c: the GPU time of the call of `fn` by thread `tid` that started at `t_ns`. */
void spy_algo_gpu_time(unsigned fn, int tid, uint64_t t_ns, uint64_t ns);
/* summary.c, at exit: the `algo` records, before the summary record. */
void spy_algo_records(void);
/* summary.c, at exit: the per-signature section of the stderr summary. */
void spy_algo_print(void);

/* What ran through cudnnBackendExecute, resolved by backend.c from the plan. */
struct spy_graph_run {
	char sig[SPY_SIG_LEN];	/* "" when the graph could not be decoded */
	int op;			/* enum spy_conv_op of its convolution, or SPY_OP_GRAPH */
	int64_t engine;		/* engine global index, -1 when unknown */
	int nknobs;		/* -1 when unknown */
	int64_t knob_type[SPY_KNOBS_MAX], knob_value[SPY_KNOBS_MAX];
	unsigned plan, config, graph;	/* backend#N numbers, 0 when unknown */
	unsigned heur;		/* the heuristics query that ranked the config, 0 when none */
	int rank;		/* its rank there, -1 */
	int heur_mode;		/* that query's cudnnBackendHeurMode_t, -1 when none */
	int64_t workspace;	/* the plan's workspace size, -1 when the program never asked */
	int nondet;		/* the engine is noted CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: 1, not: 0, unknown: -1 */
};
/* backend.c: a plan ran (or failed); returns the choice's index, for the GPU time. */
int spy_algo_graph_run(const struct spy_graph_run *g, struct spy_call *c, long status);
/* backend.c: the same plan ran again, nothing about it changed since: count it under choice `idx`. */
void spy_algo_graph_count(int idx, struct spy_call *c, long status);

/* At exit, records or not: the findings only the whole run shows (untuned-graph, replanning,
 * fallback-engine, nondeterministic-engine). */
void spy_algo_exit_findings(void);
/* backend.c: a plan of this graph was finalized (planning took `ns`, 0 when not timed). */
void spy_algo_graph_planned(const struct spy_graph_run *g, uint64_t ns);


#endif
