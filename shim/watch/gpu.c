/*
 * GPU time per call (CUDNNSPY_GPU_TIME) and the synchronizing mode
 * (CUDNNSPY_SYNC), through the CUDA runtime already loaded in the process
 * (never a second copy). Calls that enqueue work (`gpu` in the API
 * description) get a CUDA event before and after on the handle's stream;
 * the elapsed time is read later without blocking (cudaEventQuery on later
 * calls), and waited for at exit. Never during stream capture, where an
 * event would break the graph. The program's CUDA error state is only
 * peeked at: an error the spy's own calls caused is cleared, and nothing is
 * done while the program has an error pending.
 */
#include "core.h"
#include "algo.h"
#include "gpu.h"
#include "objects.h"
#include "recbin.h"
#include "sink.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 256
#define CUDA_SUCCESS 0
#define CUDA_NOT_READY 600

struct cuda {
	int (*event_create)(void **, unsigned);
	int (*event_record)(void *, void *);
	int (*event_query)(void *);
	int (*event_sync)(void *);
	int (*elapsed)(float *, void *, void *);
	int (*is_capturing)(void *, int *);
	int (*stream_sync)(void *);
	int (*peek)(void);
	int (*get)(void);
	const char *(*error_name)(int);
};

struct slot {
	void *ev[2];
	int busy;
	unsigned fn, copy;
	int tid;
	uint64_t t_ns;
	struct slot *next_pending;
};

static struct cuda cu;
static int state;		/* 0 not looked, 1 ready, -1 off */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];
static struct slot *pending_head, *pending_tail;	/* oldest first, all threads */
static unsigned long long n_timed, n_pool, n_capture, n_error;
static int off_said;

static int
find_runtime(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *b;

	(void)size;
	if (!name || !name[0])
		return 0;
	b = strrchr(name, '/');
	b = b ? b + 1 : name;
	if (strncmp(b, "libcudart.so", 12) != 0)
		return 0;
	*(void **)arg = spy_dlopen(name, RTLD_NOW | RTLD_NOLOAD);
	return *(void **)arg != NULL;
}

static void
load(void)
{
	void *h = NULL;

	dl_iterate_phdr(find_runtime, &h);
	if (!h) {
		state = -1;
		spy_log_once(&off_said, "GPU timing and synchronizing are off: no CUDA runtime (libcudart) is loaded "
			     "in this process, and the spy does not load one");
		return;
	}
	*(void **)&cu.event_create = spy_dlsym(h, "cudaEventCreateWithFlags");
	*(void **)&cu.event_record = spy_dlsym(h, "cudaEventRecord");
	*(void **)&cu.event_query = spy_dlsym(h, "cudaEventQuery");
	*(void **)&cu.event_sync = spy_dlsym(h, "cudaEventSynchronize");
	*(void **)&cu.elapsed = spy_dlsym(h, "cudaEventElapsedTime");
	*(void **)&cu.is_capturing = spy_dlsym(h, "cudaStreamIsCapturing");
	*(void **)&cu.stream_sync = spy_dlsym(h, "cudaStreamSynchronize");
	*(void **)&cu.peek = spy_dlsym(h, "cudaPeekAtLastError");
	*(void **)&cu.get = spy_dlsym(h, "cudaGetLastError");
	*(void **)&cu.error_name = spy_dlsym(h, "cudaGetErrorName");
	if (!cu.event_create || !cu.event_record || !cu.event_query || !cu.event_sync || !cu.elapsed ||
	    !cu.is_capturing || !cu.stream_sync || !cu.peek || !cu.get) {
		state = -1;
		spy_log_once(&off_said, "GPU timing and synchronizing are off: the loaded CUDA runtime lacks the "
			     "event and stream functions the spy needs");
		return;
	}
	state = 1;
}

static int
ready(void)
{
	pthread_once(&once, load);
	return state == 1;
}

const char *
spy_cuda_error_name(int err)
{
	const char *n = cu.error_name ? cu.error_name(err) : NULL;

	return n ? n : "cudaError";
}

void
spy_gpu_init(void)
{
	int sync_all = 0;
	long on = 0;

	if (spy_config.sync[0] && spy_parse_bool(spy_config.sync, &on))
		sync_all = (int)on;
	else if (spy_config.sync[0])
		spy_apply_globs("CUDNNSPY_SYNC", spy_config.sync, SPY_FN_SYNC);
	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		if (!(spy_fn_info[i].flags & SPY_FI_GPU)) {
			spy_fn_flags[i] &= (unsigned char)~SPY_FN_SYNC;
			continue;
		}
		if (spy_config.gpu_time)
			spy_fn_flags[i] |= SPY_FN_GPU_TIME;
		if (sync_all)
			spy_fn_flags[i] |= SPY_FN_SYNC;
	}
}

/*
 * Runs `fn` on the CUDA runtime only when the program has no error pending,
 * and clears an error that the spy's own call left.
 */
static int
guarded_begin(void)
{
	return cu.peek() == CUDA_SUCCESS;
}

static void
guarded_end(void)
{
	if (cu.peek() != CUDA_SUCCESS)
		cu.get();
}

static struct slot *
take_slot(void)
{
	for (int i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];

		if (s->busy)
			continue;
		if (!s->ev[0] && (cu.event_create(&s->ev[0], 0) != CUDA_SUCCESS ||
				  cu.event_create(&s->ev[1], 0) != CUDA_SUCCESS))
			return NULL;
		s->busy = 1;
		return s;
	}
	return NULL;
}

void
spy_gpu_pre(struct spy_call *c, const void *handle)
{
	typedef int (*get_stream_fn)(const void *, void **);
	get_stream_fn get_stream = (get_stream_fn)spy_real_fn(c->copy, _SPY_FN_cudnnGetStream);
	int capturing = 0;
	struct slot *s;

	if (!get_stream || !ready())
		return;
	pthread_mutex_lock(&lock);
	if (!guarded_begin()) {
		n_error++;
		goto out;
	}
	if (get_stream(handle, &c->stream) != 0) {
		c->stream = (void *)-1;
		goto out_guard;
	}
	if (cu.is_capturing(c->stream, &capturing) != CUDA_SUCCESS || capturing) {
		/* An event recorded, or a synchronize, during capture would break the program's graph. */
		c->stream = (void *)-1;
		n_capture++;
		goto out_guard;
	}
	if (!(spy_fn_flags[c->id] & SPY_FN_GPU_TIME))
		goto out_guard;
	s = take_slot();
	if (!s) {
		n_pool++;
		goto out_guard;
	}
	if (cu.event_record(s->ev[0], c->stream) != CUDA_SUCCESS) {
		s->busy = 0;
		n_error++;
		goto out_guard;
	}
	c->gpu_slot = (short)(s - slots);
	if (!c->t0)
		c->t0 = spy_now_ns();
out_guard:
	guarded_end();
out:
	pthread_mutex_unlock(&lock);
}

static void
gpu_record(struct slot *s, uint64_t ns)
{
	struct spy_thread *th = spy_thread_get();
	struct spy_buf *b;

	/* GPU totals are kept in the copy-0 block of the thread that reads them: the summary adds them up. */
	struct spy_counts *n = spy_counts_of(th, 0, s->fn);

	SPY_INC(n->gpu_timed);
	__atomic_store_n(&n->gpu_total_ns, n->gpu_total_ns + ns, __ATOMIC_RELAXED);
	n_timed++;
	/* The convolution's (signature, algorithm) gets the time too, found by its thread and start. */
	spy_algo_gpu_time(s->fn, s->tid, s->t_ns, ns);
	if (!spy_sink_enabled() || !(b = spy_thread_buf(th)))
		return;
	if (spy_config.format == SPY_FORMAT_BINARY && spy_recbin_gpu(th, s->fn, s->copy, s->tid, s->t_ns, ns))
		return;
	spy_line_reset(&b->line);
	spy_line_lit(&b->line, "{\"event\":\"gpu\",\"fn\":");
	spy_line_name(&b->line, spy_fn_info[s->fn].name);
	spy_line_lit(&b->line, ",\"copy\":");
	spy_line_u64(&b->line, s->copy);
	spy_line_lit(&b->line, ",\"tid\":");
	spy_line_i64(&b->line, s->tid);
	spy_line_lit(&b->line, ",\"t_ns\":");
	spy_line_u64(&b->line, s->t_ns);
	spy_line_lit(&b->line, ",\"gpu_ns\":");
	spy_line_u64(&b->line, ns);
	spy_line_char(&b->line, '}');
	spy_sink_commit(th, &b->line, 0);
}

/* Reads the finished timings, oldest first, without waiting unless `wait`. Lock held. */
static void
resolve(int wait)
{
	while (pending_head) {
		struct slot *s = pending_head;
		float ms = 0;
		int q = wait ? cu.event_sync(s->ev[1]) : cu.event_query(s->ev[1]);

		if (q == CUDA_NOT_READY)
			break;
		pending_head = s->next_pending;
		if (!pending_head)
			pending_tail = NULL;
		if (q == CUDA_SUCCESS && cu.elapsed(&ms, s->ev[0], s->ev[1]) == CUDA_SUCCESS)
			gpu_record(s, (uint64_t)((double)ms * 1e6 + 0.5));
		else
			n_error++;
		s->busy = 0;
	}
}

int
spy_gpu_post(struct spy_call *c)
{
	int err = 0;

	if (state != 1)
		return 0;
	pthread_mutex_lock(&lock);
	if (!guarded_begin()) {
		/* The program has an error pending: leave the runtime alone; the slot comes back at exit. */
		if (c->gpu_slot >= 0)
			slots[c->gpu_slot].busy = 0;
		n_error++;
		goto out;
	}
	if (c->gpu_slot >= 0) {
		struct slot *s = &slots[c->gpu_slot];

		if (cu.event_record(s->ev[1], c->stream) == CUDA_SUCCESS) {
			s->fn = c->id;
			s->copy = c->copy;
			s->tid = (int)syscall(SYS_gettid);
			s->t_ns = c->t0;
			s->next_pending = NULL;
			if (pending_tail)
				pending_tail->next_pending = s;
			else
				pending_head = s;
			pending_tail = s;
		} else {
			s->busy = 0;
			n_error++;
		}
	}
	resolve(0);
	guarded_end();
	if ((spy_fn_flags[c->id] & SPY_FN_SYNC) && !c->injected && c->stream != (void *)-1) {
		/*
		 * The error, if any, is the program's own (a kernel of this call
		 * faulted): it stays for the program to see.
		 */
		err = cu.stream_sync(c->stream);
		if (err == CUDA_NOT_READY)
			err = 0;
	}
out:
	pthread_mutex_unlock(&lock);
	return err;
}

void
spy_gpu_drain(void)
{
	if (state != 1)
		return;
	pthread_mutex_lock(&lock);
	if (guarded_begin()) {
		resolve(1);
		guarded_end();
	}
	pthread_mutex_unlock(&lock);
}

void
spy_gpu_stats(struct spy_gpu_stats *out)
{
	out->timed = n_timed;
	out->skipped_pool = n_pool;
	out->skipped_capture = n_capture;
	out->skipped_error = n_error;
	out->off = state == -1;
}
