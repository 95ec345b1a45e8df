/*
 * Format 2's frames back into format 1's JSON lines, with the same
 * formatters the library uses (buf.c) and the same tables (the API
 * description): a packed call reads exactly as the JSON record the library
 * would have written for it (the binary-records test compares the two).
 */
#include "records.h"
#include "rec-state.h"
#include "callrec.h"
#include "cli-util.h"
#include "recfmt.h"
#include "spy-api.h"
#include "symtab.h"
#include "battr.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A frame or line longer than this is not read whole (SPY_LINE_MAX is the library's own limit). */
#define READ_MAX ((size_t)SPY_LINE_MAX + 64)
/*
 * The longest text a text frame holds: the library builds each frame in
 * 4096 bytes, its id included (recbin.c's define()), so a longer one is no
 * text the spy wrote. A text is pasted into every call that names it: the
 * bound is what one reference can cost, whatever the file says.
 */
#define TEXT_FRAME_MAX SPY_REC_TEXT_MAX
/*
 * The longest text a backend descriptor's text grows to by the attributes
 * packed calls add to it (setattr_args()): the library keeps 12 attributes
 * of at most 16 values (backend.c), each shown here in at most 4096 bytes,
 * so a real one stays well below this.
 */
#define TEXT_MAX (64u << 10)
/* No record nests deeper (a graph's operations, their descriptors, their attributes' values). */
#define JSON_DEPTH 128
/*
 * Text ids go from 1 to TEXT_IDS (keep_text()). They are kept in pages made
 * as ids come, so that one frame of a high id costs a page, not an array
 * of every id below it.
 */
#define TEXT_IDS (1u << 22)
#define TEXT_PAGE 4096u
#define TEXT_NPAGES (TEXT_IDS / TEXT_PAGE + 1)

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
rec_dir_files(const char *dir, size_t max, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **files = NULL;
	size_t n = 0;
	int err = 0;

	*count = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d)) && n < max) {
		char *path, **bigger;
		struct stat st;

		if (e->d_name[0] == '.' || !cli_is_record_name(e->d_name))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
			err = ENOMEM;
			break;
		}
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(bigger = realloc(files, (n + 1) * sizeof(*files)))) {
			free(path);
			continue;
		}
		files = bigger;
		files[n++] = path;
	}
	closedir(d);
	if (n)
		qsort(files, n, sizeof(*files), by_name);
	*count = n;
	errno = err;
	return files;
}

int
rec_is_binary(const void *data, size_t len)
{
	const uint8_t *p = data;

	return len >= 10 && p[0] == SPY_REC_FILE && memcmp(p + 2, SPY_REC_MAGIC, 8) == 0;
}

static size_t
json_space(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static int
json_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * One past the string that begins at s[i] (its '"'); 0 when it is none: a
 * control byte, a bad escape, or bytes that are not UTF-8 (overlong forms,
 * surrogates and code points past U+10FFFF included), which no JSON reader
 * is bound to take.
 */
static size_t
json_string(const unsigned char *s, size_t n, size_t i)
{
	for (i++; i < n;) {
		unsigned c = s[i];
		size_t len;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c == '"')
			return i + 1;
		if (c == '\\') {
			if (i + 1 >= n)
				return 0;
			switch (s[i + 1]) {
			case '"':
			case '\\':
			case '/':
			case 'b':
			case 'f':
			case 'n':
			case 'r':
			case 't':
				i += 2;
				continue;
			case 'u':
				if (n - i < 6 || !json_hex(s[i + 2]) || !json_hex(s[i + 3]) || !json_hex(s[i + 4]) ||
				    !json_hex(s[i + 5]))
					return 0;
				i += 6;
				continue;
			}
			return 0;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		else
			return 0;
		if (n - i < len)
			return 0;
		for (size_t k = 1; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
		if ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] > 0x9f) || (c == 0xf0 && s[i + 1] < 0x90) ||
		    (c == 0xf4 && s[i + 1] > 0x8f))
			return 0;
		i += len;
	}
	return 0;
}

static size_t
json_digits(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* One past the number at s[i]; 0 when it is none. */
static size_t
json_number(const unsigned char *s, size_t n, size_t i)
{
	size_t at;

	if (i < n && s[i] == '-')
		i++;
	if (i >= n || s[i] < '0' || s[i] > '9')
		return 0;
	i = s[i] == '0' ? i + 1 : json_digits(s, n, i);
	if (i < n && s[i] == '.') {
		at = i + 1;
		if ((i = json_digits(s, n, at)) == at)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		at = i + 1;
		if (at < n && (s[at] == '+' || s[at] == '-'))
			at++;
		if ((i = json_digits(s, n, at)) == at)
			return 0;
	}
	return i;
}

int
rec_json_valid(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned char open[JSON_DEPTH];	/* the containers around the place: '{' or '[' */
	int depth = 0;
	size_t i = json_space(s, n, 0);

	for (;;) {
		/* A value at s[i]. */
		if (i >= n)
			return 0;
		switch (s[i]) {
		case '{':
		case '[':
			if (depth == JSON_DEPTH)
				return 0;
			open[depth++] = s[i];
			i = json_space(s, n, i + 1);
			if (i < n && s[i] == (open[depth - 1] == '{' ? '}' : ']')) {
				depth--;
				i++;
				goto after;
			}
			if (open[depth - 1] == '{')
				goto key;
			continue;
		case '"':
			i = json_string(s, n, i);
			break;
		case 't':
			i = n - i >= 4 && memcmp(s + i, "true", 4) == 0 ? i + 4 : 0;
			break;
		case 'f':
			i = n - i >= 5 && memcmp(s + i, "false", 5) == 0 ? i + 5 : 0;
			break;
		case 'n':
			i = n - i >= 4 && memcmp(s + i, "null", 4) == 0 ? i + 4 : 0;
			break;
		default:
			i = json_number(s, n, i);
		}
		if (!i)
			return 0;
after:
		/* After a value: a comma and the next, the end of its container, or the end of the text. */
		i = json_space(s, n, i);
		if (!depth)
			return i == n;
		if (i >= n)
			return 0;
		if (s[i] == ',') {
			i = json_space(s, n, i + 1);
			if (open[depth - 1] == '[')
				continue;
			goto key;
		}
		if (s[i] != (open[depth - 1] == '{' ? '}' : ']'))
			return 0;
		depth--;
		i++;
		goto after;
key:
		/* A key and its colon; the value follows. */
		if (i >= n || s[i] != '"' || !(i = json_string(s, n, i)))
			return 0;
		i = json_space(s, n, i);
		if (i >= n || s[i] != ':')
			return 0;
		i = json_space(s, n, i + 1);
	}
}

static void
init(struct rec_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	spy_line_reset(&r->out);
	spy_line_reset(&r->scratch);
}

void
rec_open_fd(struct rec_reader *r, int fd)
{
	rec_open_fd_buffer(r, fd, 1u << 20);
}

void
rec_open_fd_buffer(struct rec_reader *r, int fd, size_t first)
{
	init(r);
	r->fd = fd;
	r->cap = first ? first : 1;
	r->buf = malloc(r->cap);
	r->owned = 1;
	if (!r->buf) {
		r->error = ENOMEM;
		r->eof = 1;
		r->cap = 0;
	}
}

void
rec_open_fd_after(struct rec_reader *r, int fd, const void *first, size_t len)
{
	rec_open_fd_buffer(r, fd, len > (1u << 20) ? len : 1u << 20);
	if (r->buf && len) {
		memcpy(r->buf, first, len);
		r->end = len;
	}
}

void
rec_open_mem(struct rec_reader *r, const void *data, size_t len)
{
	init(r);
	r->buf = (uint8_t *)data;
	r->end = r->cap = len;
	r->eof = 1;
}

void
rec_close(struct rec_reader *r)
{
	for (size_t i = 0; r->text_pages && i < TEXT_NPAGES; i++) {
		for (size_t k = 0; r->text_pages[i] && k < TEXT_PAGE; k++)
			free(r->text_pages[i][k].s);
		free(r->text_pages[i]);
	}
	free(r->text_pages);
	free(r->live);
	rec_state_free(r->state);
	r->state = NULL;
	if (r->owned)
		free(r->buf);
	spy_line_free(&r->out);
	spy_line_free(&r->scratch);
	r->text_pages = NULL;
	r->live = NULL;
	r->buf = NULL;
}

/* More bytes after buf[end]; 0 when none came (the end, or an error). */
static int
fill(struct rec_reader *r)
{
	ssize_t got;

	if (r->eof)
		return 0;
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->offset += r->start;
		r->end -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap) {
		size_t cap = r->cap * 2 > READ_MAX ? READ_MAX : r->cap * 2;
		uint8_t *b = cap > r->cap ? realloc(r->buf, cap) : NULL;

		if (!b) {
			/* Past READ_MAX, or out of memory: what is held is given as it is. */
			return 0;
		}
		r->buf = b;
		r->cap = cap;
	}
	do
		got = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		r->error = errno;
	if (got <= 0) {
		r->eof = 1;
		return 0;
	}
	r->end += (size_t)got;
	return 1;
}

/* The text of an id, when its page was made: NULL for an id that had none. */
static struct rec_text *
text_at(const struct rec_reader *r, uint64_t id)
{
	if (id == 0 || id > TEXT_IDS || !r->text_pages || !r->text_pages[id / TEXT_PAGE])
		return NULL;
	return &r->text_pages[id / TEXT_PAGE][id % TEXT_PAGE];
}

/* The same, its page made when it has none; NULL when there is no memory for it. */
static struct rec_text *
text_slot(struct rec_reader *r, uint64_t id)
{
	struct rec_text **page;

	if (!r->text_pages && !(r->text_pages = calloc(TEXT_NPAGES, sizeof(*r->text_pages))))
		return NULL;
	page = &r->text_pages[id / TEXT_PAGE];
	if (!*page)
		*page = calloc(TEXT_PAGE, sizeof(**page));
	return *page ? &(*page)[id % TEXT_PAGE] : NULL;
}

/* Every text gone: only those given since the last time are visited, so that damage costs what was read. */
static void
forget_texts(struct rec_reader *r)
{
	for (size_t i = 0; i < r->nlive; i++) {
		struct rec_text *t = text_at(r, r->live[i]);

		free(t->s);
		t->s = NULL;
		t->listed = 0;
	}
	r->nlive = 0;
}

/* The text of an id gone: what named it reads as missing rather than as the object's older text. */
static void
drop_text(struct rec_reader *r, uint64_t id)
{
	struct rec_text *t = text_at(r, id);

	if (t) {
		free(t->s);
		t->s = NULL;
	}
}

/*
 * The text of an id from now on, when it is one the spy could have
 * written: at most `max` bytes, and JSON (up to a NUL, after which a stack
 * module's text names its files). 0 when it is not (damage): the id has no
 * text then. A text that finds no memory is dropped alike, without damage.
 */
static int
keep_text(struct rec_reader *r, uint64_t id, const uint8_t *s, size_t n, size_t max)
{
	const uint8_t *nul = memchr(s, 0, n);
	size_t json = nul ? (size_t)(nul - s) : n;
	struct rec_text *t;
	char *copy;

	/*
	 * An id is a place in a thread's cache (64 per thread block, recbin.c),
	 * given a new text as the cache changes: the latest one holds. One past
	 * 2^22 (65,536 blocks) is damage.
	 */
	if (id == 0 || id > TEXT_IDS)
		return 0;
	if (n > max || !rec_json_valid((const char *)s, json)) {
		drop_text(r, id);
		return 0;
	}
	r->texts_seen++;
	if (!(t = text_slot(r, id)))
		return 1;
	if (!t->listed) {
		if (r->nlive == r->live_cap) {
			size_t cap = r->live_cap ? 2 * r->live_cap : 64;
			uint32_t *live = realloc(r->live, cap * sizeof(*live));

			if (!live) {
				drop_text(r, id);
				return 1;
			}
			r->live = live;
			r->live_cap = cap;
		}
		r->live[r->nlive++] = (uint32_t)id;
		t->listed = 1;
	}
	copy = malloc(n + 1);
	free(t->s);
	t->s = copy;
	if (!copy)
		return 1;
	memcpy(copy, s, n);
	copy[n] = 0;
	t->len = (uint32_t)n;
	t->json = (uint32_t)json;
	return 1;
}

static void
file_frame(struct rec_reader *r, const uint8_t *p, size_t n)
{
	uint32_t count = 0, hash = 0, layout = 0;

	r->have_file = 1;
	if (n < 18 || memcmp(p, SPY_REC_MAGIC, 8) != 0) {
		r->mismatch = 1;
		return;
	}
	r->version = p[8] | (unsigned)p[9] << 8;
	for (int i = 0; i < 4; i++) {
		count |= (uint32_t)p[10 + i] << (8 * i);
		hash |= (uint32_t)p[14 + i] << (8 * i);
		if (n >= 22)
			layout |= (uint32_t)p[18 + i] << (8 * i);
	}
	/*
	 * Ids mean functions of the writer's table, packed by its layout: another table's are not guessed at.
	 * Versions 2 to 4 are version 5 without failure frames (4 has them), stacks in call frames (2 has none),
	 * and the layout hash, which only the names hash stood for: read the same way.
	 */
	r->mismatch = r->version < 2 || r->version > SPY_REC_VERSION || count != _SPY_FN_COUNT ||
		      hash != spy_rec_names_hash() ||
		      (r->version >= 5 && (n < 22 || layout != spy_rec_layout_hash()));
}

static void
enum_value(struct spy_line *l, int enum_id, int64_t v)
{
	const char *name = spy_enum_name(enum_id, v, 0);

	if (name)
		spy_line_name(l, name);
	else
		spy_line_i64(l, v);
}

/* A handle's or descriptor's text by its id. */
static void
text(struct rec_reader *r, struct spy_line *l, uint64_t v)
{
	const struct rec_text *t = text_at(r, v);

	if (v == 0) {
		spy_line_lit(l, "null");
	} else if (t && t->s && t->json == t->len) {
		spy_line_mem(l, t->s, t->len);
	} else {
		/*
		 * Its text was in a damaged part, or in a buffer the spy could not write, or is a stack module's:
		 * the id is all there is.
		 */
		if (!r->missing_texts++)
			r->missing_at = r->frame_at;
		spy_line_lit(l, "{\"id\":null,\"text_missing\":");
		spy_line_u64(l, v);
		spy_line_char(l, '}');
	}
}

/* One element behind a pointer, as args.c shows it; 0 when the frame ends first. */
static int
element(struct rec_reader *r, struct spy_line *l, const struct spy_param_info *a, const uint8_t *p, size_t n,
	size_t *pos)
{
	uint64_t v;
	double d;

	if (a->elem == SPY_ARG_DOUBLE) {
		if (*pos + 8 > n)
			return 0;
		memcpy(&d, p + *pos, 8);
		*pos += 8;
		spy_line_double(l, d);
		return 1;
	}
	if (!spy_rec_get_uv(p, n, pos, &v))
		return 0;
	switch (a->elem) {
	case SPY_ARG_INT:
		spy_line_i64(l, spy_rec_unzigzag(v));
		return 1;
	case SPY_ARG_ENUM:
		enum_value(l, a->enum_id, spy_rec_unzigzag(v));
		return 1;
	case SPY_ARG_UINT:
		spy_line_u64(l, v);
		return 1;
	case SPY_ARG_HANDLE:
	case SPY_ARG_DESC:
		text(r, l, v);
		return 1;
	}
	return 0;
}

/* A parameter behind a pointer; 0 when the frame ends first or says what the description does not allow. */
static int
pointer_arg(struct rec_reader *r, struct spy_line *l, const struct spy_param_info *a, const uint8_t *p, size_t n,
	    size_t *pos, int failure)
{
	enum spy_rec_ptr shape = spy_rec_ptr_shape(a);
	uint64_t addr, count;

	if (shape == SPY_REC_PTR_NO || !spy_rec_get_uv(p, n, pos, &addr))
		return 0;
	if (!addr) {
		spy_line_lit(l, "null");
		return 1;
	}
	/* A failed call's out-values were not read: the address alone. */
	if (shape == SPY_REC_PTR_ADDRESS || (failure && shape == SPY_REC_PTR_VALUES && !a->is_array)) {
		spy_line_hex(l, addr);
		return 1;
	}
	if (shape == SPY_REC_PTR_SCALING) {
		double d;
		uint8_t how;

		if (*pos >= n)
			return 0;
		how = p[(*pos)++];
		if (how == SPY_REC_SCALING_NONE) {
			spy_line_hex(l, addr);
			return 1;
		}
		if (how > SPY_REC_SCALING_DOUBLE || *pos + 8 > n)
			return 0;
		memcpy(&d, p + *pos, 8);
		*pos += 8;
		spy_line_lit(l, "{\"ptr\":");
		spy_line_hex(l, addr);
		spy_line_lit(l, ",\"value\":");
		if (how == SPY_REC_SCALING_DOUBLE)
			spy_line_double(l, d);
		else
			spy_line_float(l, (float)d);
		spy_line_char(l, '}');
		return 1;
	}
	if (a->is_array) {
		if (!spy_rec_get_uv(p, n, pos, &count) || count > SPY_REC_VALUES + 1)
			return 0;
		if (count == 0) {
			spy_line_hex(l, addr);
			return 1;
		}
		spy_line_lit(l, "{\"ptr\":");
		spy_line_hex(l, addr);
		spy_line_lit(l, ",\"values\":[");
		for (uint64_t k = 0; k + 1 < count; k++) {
			if (k)
				spy_line_char(l, ',');
			if (!element(r, l, a, p, n, pos))
				return 0;
		}
		spy_line_lit(l, "]}");
		return 1;
	}
	spy_line_lit(l, "{\"ptr\":");
	spy_line_hex(l, addr);
	spy_line_lit(l, ",\"value\":");
	if (!element(r, l, a, p, n, pos))
		return 0;
	spy_line_char(l, '}');
	return 1;
}

/* ---- cudnnBackendSetAttribute (recbin.c's setattr()) ---- */

/* An element that names an object: the text the record holds for it (battr.c renders the rest as backend.c does). */
static void
text_object(struct spy_line *l, const struct spy_battr_type *t, int64_t v, int index, void *ctx)
{
	(void)t;
	(void)index;
	text(ctx, l, (uint64_t)v);
}

/* One past the end of the JSON value or key at s[i]; 0 when it is not whole. */
static size_t
value_end(const char *s, size_t n, size_t i)
{
	int depth = 0;

	for (; i < n; i++) {
		char c = s[i];

		if (c == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			if (i >= n)
				return 0;
			if (!depth)
				return i + 1;
		} else if (c == '[' || c == '{') {
			depth++;
		} else if (c == ']' || c == '}') {
			if (!depth)
				return i;
			if (!--depth)
				return i + 1;
		} else if (!depth && c == ',') {
			return i;
		}
	}
	return depth ? 0 : n;
}

/*
 * A backend descriptor's text with one attribute set, as backend.c keeps
 * it: the attribute replaced where it is, or added last. 0 when the text has
 * no attributes object to set it in (the frame is then unreadable).
 */
static int
with_attr(struct spy_line *out, const char *t, size_t n, const char *key, size_t klen, const char *val, size_t vlen)
{
	static const char mark[] = ",\"attrs\":{";
	const char *at = memmem(t, n, mark, sizeof(mark) - 1);
	size_t i;
	int first = 1, replaced = 0;

	if (!at)
		return 0;
	i = (size_t)(at - t) + sizeof(mark) - 1;
	spy_line_mem(out, t, i);
	while (i < n && t[i] != '}') {
		size_t ke = t[i] == '"' ? value_end(t, n, i) : 0, ve;

		if (!ke || ke >= n || t[ke] != ':' || !(ve = value_end(t, n, ke + 1)))
			return 0;
		if (!first)
			spy_line_char(out, ',');
		spy_line_mem(out, t + i, ke + 1 - i);
		if (ke - i == klen && memcmp(t + i, key, klen) == 0) {
			spy_line_mem(out, val, vlen);
			replaced = 1;
		} else {
			spy_line_mem(out, t + ke + 1, ve - ke - 1);
		}
		first = 0;
		i = ve < n && t[ve] == ',' ? ve + 1 : ve;
	}
	if (i >= n)
		return 0;
	if (!replaced) {
		if (!first)
			spy_line_char(out, ',');
		spy_line_mem(out, key, klen);
		spy_line_char(out, ':');
		spy_line_mem(out, val, vlen);
	}
	spy_line_mem(out, t + i, n - i);
	return 1;
}

/* An attribute's elements after their address (recbin.c's battr_array()); 0 when the frame ends first. */
static int
battr_read(const struct spy_battr_type *t, int64_t count, const uint8_t *p, size_t n, size_t *pos, int64_t *v,
	   const uint8_t **str, uint64_t *len)
{
	int per = t->kind == SPY_BV_FRACTION ? 2 : 1;
	int64_t shown = count < 0 ? 0 : count < SPY_REC_VALUES ? count : SPY_REC_VALUES;
	uint64_t u;

	if (t->kind == SPY_BV_CHAR) {
		if (!spy_rec_get_uv(p, n, pos, len) || *len > SPY_REC_STRING_MAX || *len > n - *pos)
			return 0;
		*str = p + *pos;
		*pos += *len;
		return 1;
	}
	for (int64_t k = 0; k < shown * per; k++) {
		if (t->kind == SPY_BV_FLOAT || t->kind == SPY_BV_DOUBLE) {
			if (*pos + 8 > n)
				return 0;
			memcpy(&v[k], p + *pos, 8);
			*pos += 8;
		} else if (t->kind == SPY_BV_BOOL) {
			if (*pos >= n)
				return 0;
			v[k] = p[(*pos)++] != 0;
		} else if (!spy_rec_get_uv(p, n, pos, &u)) {
			return 0;
		} else {
			v[k] = t->kind == SPY_BV_PTR || t->kind == SPY_BV_HANDLE || t->kind == SPY_BV_DESC ? (int64_t)u
													    : spy_rec_unzigzag(u);
		}
	}
	return 1;
}

/*
 * The arguments of a packed cudnnBackendSetAttribute: the descriptor's text
 * (with the attribute added to the text the thread wrote before, when the
 * frame says so), the attribute's name, type and count, and its elements as
 * backend.c shows them. 0 when the frame ends first or is not one.
 */
static int
setattr_args(struct rec_reader *r, struct spy_line *l, const struct spy_fn_info *f, const uint8_t *p, size_t n,
	     size_t *pos)
{
	uint64_t id, u, addr, len = 0;
	int64_t name, type, count, v[2 * SPY_REC_VALUES];
	const struct spy_battr_type *t;
	struct spy_battr_show how = { text_object, r };
	const uint8_t *str = NULL;
	int delta;

	if (f->nparams != 5 || !spy_rec_get_uv(p, n, pos, &id) || *pos >= n || (delta = p[(*pos)++]) > 1 ||
	    !spy_rec_get_uv(p, n, pos, &u))
		return 0;
	name = spy_rec_unzigzag(u);
	if (!spy_rec_get_uv(p, n, pos, &u))
		return 0;
	type = spy_rec_unzigzag(u);
	if (type < 0 || type >= SPY_BATTR_NTYPES || !spy_rec_get_uv(p, n, pos, &u) || !spy_rec_get_uv(p, n, pos, &addr))
		return 0;
	count = spy_rec_unzigzag(u);
	t = &spy_battr_types[type];
	if (!battr_read(t, count, p, n, pos, v, &str, &len))
		return 0;
	if (delta) {
		/* This thread's text of the descriptor just before the call, with the attribute: its text from now on. */
		struct spy_line *s = &r->scratch;
		const char *key = spy_enum_name(f->params[1].enum_id, name, 0);
		char num[24], keyq[160], val[4096];
		size_t klen, vlen;
		const struct rec_text *was;

		if (!key) {
			snprintf(num, sizeof(num), "%lld", (long long)name);
			key = num;
		}
		klen = (size_t)snprintf(keyq, sizeof(keyq), "\"%s\"", key);
		spy_line_reset(s);
		spy_battr_kept_json(s, t, count, spy_battr_stored(t, count), v, &how);
		vlen = s->len;
		if (s->overflow || vlen > sizeof(val) || klen >= sizeof(keyq))
			return 0;
		memcpy(val, s->data, vlen);
		spy_line_reset(s);
		if ((was = text_at(r, id)) && was->s) {
			/*
			 * A text this frame cannot grow, or one grown past what the spy keeps, is lost with the
			 * call: the calls after it would otherwise show the descriptor without this attribute.
			 */
			if (was->json != was->len || !with_attr(s, was->s, was->len, keyq, klen, val, vlen) || s->overflow ||
			    !keep_text(r, id, (const uint8_t *)s->data, s->len, TEXT_MAX)) {
				drop_text(r, id);
				return 0;
			}
		}
		/* No text to add it to (it was in a damaged part): shown as missing below. */
	}
	spy_line_key(l, f->params[0].name);
	text(r, l, id);
	spy_line_char(l, ',');
	spy_line_key(l, f->params[1].name);
	enum_value(l, f->params[1].enum_id, name);
	spy_line_char(l, ',');
	spy_line_key(l, f->params[2].name);
	enum_value(l, f->params[2].enum_id, type);
	spy_line_char(l, ',');
	spy_line_key(l, f->params[3].name);
	spy_line_i64(l, count);
	spy_line_char(l, ',');
	spy_line_key(l, f->params[4].name);
	spy_battr_array_json(l, t, addr, count, v, (const char *)str, len, &how);
	return 1;
}

/*
 * cudnnBackendGetAttribute's arrayOfElements after a non-NULL elementCount:
 * the address, the count shown and the elements (recbin.c's getattr_array());
 * `type` is the call's attributeType. 0 when the frame ends first.
 */
static int
getattr_array(struct rec_reader *r, struct spy_line *l, int64_t type, const uint8_t *p, size_t n, size_t *pos)
{
	uint64_t addr, count, len = 0;
	int64_t v[2 * SPY_REC_VALUES];
	const uint8_t *str = NULL;
	const struct spy_battr_type *t;
	struct spy_battr_show how = { text_object, r };

	if (type < 0 || type >= SPY_BATTR_NTYPES || !spy_rec_get_uv(p, n, pos, &addr) ||
	    !spy_rec_get_uv(p, n, pos, &count) || count > INT64_MAX)
		return 0;
	t = &spy_battr_types[type];
	if (!battr_read(t, (int64_t)count, p, n, pos, v, &str, &len))
		return 0;
	spy_battr_array_json(l, t, addr, (int64_t)count, v, (const char *)str, len, &how);
	return 1;
}

/* Hex digits into bytes; their count, 0 when they are not an even run of hex digits that fits. */
static size_t
unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = 0;

	for (; s[0] && s[1] && n < max; s += 2) {
		int hi = s[0] >= 'a' && s[0] <= 'f' ? s[0] - 'a' + 10 : s[0] >= '0' && s[0] <= '9' ? s[0] - '0' : -1;
		int lo = s[1] >= 'a' && s[1] <= 'f' ? s[1] - 'a' + 10 : s[1] >= '0' && s[1] <= '9' ? s[1] - '0' : -1;

		if (hi < 0 || lo < 0)
			return 0;
		out[n++] = (unsigned char)(hi << 4 | lo);
	}
	return s[0] ? 0 : n;
}

/*
 * The file to name a module's functions from: the one the record names,
 * when it is still the build that ran (its build-id); else the build's
 * debug file where distributions put them (/usr/lib/debug/.build-id); else
 * none, rather than names from another build. A module without a build-id
 * is named from its file as it is.
 */
static const char *
symbol_file(const char *file, const char *bid_hex, char *buf, size_t size)
{
	unsigned char want[SPY_BUILD_ID_MAX], got[SPY_BUILD_ID_MAX];
	size_t n = bid_hex && *bid_hex ? unhex(bid_hex, want, sizeof(want)) : 0;

	if (!n)
		return file;
	if (spy_symtab_build_id(file, got, sizeof(got)) == n && memcmp(got, want, n) == 0)
		return file;
	if ((size_t)snprintf(buf, size, "/usr/lib/debug/.build-id/%.2s/%s.debug", bid_hex, bid_hex + 2) < size &&
	    spy_symtab_build_id(buf, got, sizeof(got)) == n && memcmp(got, want, n) == 0)
		return buf;
	return NULL;
}

/*
 * A packed call's stack, as format 1's "stack": each frame's module (a text:
 * its name as JSON, a NUL, the file to read its symbols from), its offset,
 * and its function from that file's symbol table, as the library names it
 * (the byte before the return address). 0 when the frame ends first.
 */
static int
stack(struct rec_reader *r, struct spy_line *l, const uint8_t *p, size_t n, size_t *pos, int allow_none)
{
	uint64_t frames, id, off;
	char name[256];

	if (!spy_rec_get_uv(p, n, pos, &frames) || (frames == 0 && !allow_none) || frames > SPY_REC_STACK_MAX)
		return 0;
	spy_line_lit(l, ",\"stack\":[");
	for (uint64_t i = 0; i < frames; i++) {
		const char *t = NULL, *file = NULL, *bid = NULL;
		const struct rec_text *mod;
		char debug[PATH_MAX];

		if (!spy_rec_get_uv(p, n, pos, &id) || !spy_rec_get_uv(p, n, pos, &off))
			return 0;
		if ((mod = text_at(r, id)) && mod->s && mod->json < mod->len) {
			/* Its name as JSON (keep_text() saw it is), then its files. */
			t = mod->s;
			file = t + mod->json + 1;
			/* A text without a build-id part names no build: its file is taken as it is. */
			if ((size_t)(file + strlen(file) - t) < mod->len)
				bid = file + strlen(file) + 1;
			file = symbol_file(file, bid, debug, sizeof(debug));
		} else if (id && !r->missing_texts++) {
			r->missing_at = r->frame_at;
		}
		if (i)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"module\":");
		if (t)
			spy_line_raw(l, t);
		else
			spy_line_lit(l, "null");
		spy_line_lit(l, ",\"offset\":");
		spy_line_hex(l, off);
		spy_line_lit(l, ",\"symbol\":");
		if (t && file && off > 0 && spy_symtab_name(file, off - 1, name, sizeof(name)) > 0)
			spy_line_str(l, name);
		else
			spy_line_lit(l, "null");
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
	return 1;
}

/*
 * A packed call's Python frames (version 7), as format 1's "python": the
 * text its id names, a JSON array written once per distinct stack. Nothing
 * when the text is not there (a full disk dropped it) or is no array.
 */
static void
python_frames(struct rec_reader *r, struct spy_line *l, uint64_t id)
{
	const struct rec_text *t = text_at(r, id);

	if (!t || !t->s || t->json != t->len || t->len < 2 || t->s[0] != '[') {
		if (!r->missing_texts++)
			r->missing_at = r->frame_at;
		return;
	}
	spy_line_lit(l, ",\"python\":");
	spy_line_raw(l, t->s);
}

/* A failure frame's text (a varint length and the bytes) as a JSON string; 0 when the frame ends first. */
static int
failure_text(struct spy_line *l, const uint8_t *p, size_t n, size_t *pos)
{
	char s[SPY_REC_MESSAGE_MAX + 1];
	uint64_t len;

	if (!spy_rec_get_uv(p, n, pos, &len) || len > SPY_REC_MESSAGE_MAX || len > n - *pos ||
	    memchr(p + *pos, 0, (size_t)len))
		return 0;
	memcpy(s, p + *pos, (size_t)len);
	s[len] = 0;
	*pos += (size_t)len;
	spy_line_str(l, s);
	return 1;
}

/*
 * What follows a failure's arguments: its stack (perhaps of no frames),
 * then the flags, cuDNN's message, the spy's why and the recent calls;
 * shown in the order of the JSON failure record, the stack last.
 */
static int
failure_tail(struct rec_reader *r, struct spy_line *l, const uint8_t *p, size_t n, size_t pos)
{
	size_t at = pos, end;
	uint64_t frames, v, fn, st, count, pyid = 0;
	unsigned flags;
	int first = 1;

	/* Past the stack first: it is shown last. */
	if (!spy_rec_get_uv(p, n, &pos, &frames) || frames > SPY_REC_STACK_MAX)
		return 0;
	for (uint64_t i = 0; i < 2 * frames; i++)
		if (!spy_rec_get_uv(p, n, &pos, &v))
			return 0;
	end = pos;
	if (pos >= n)
		return 0;
	flags = p[pos++];
	if (flags & ~(unsigned)(SPY_REC_F_INJECTED | SPY_REC_F_PROBING | SPY_REC_F_MESSAGE | SPY_REC_F_WHY |
				SPY_REC_F_PYTHON | SPY_REC_F_NO_FUNCTION))
		return 0;
	if (flags & SPY_REC_F_INJECTED)
		spy_line_lit(l, ",\"injected\":true");
	if (flags & SPY_REC_F_NO_FUNCTION)
		spy_line_lit(l, ",\"no_function\":true");
	if (flags & SPY_REC_F_PROBING)
		spy_line_lit(l, ",\"probing\":true");
	spy_line_lit(l, ",\"message\":");
	if (!(flags & SPY_REC_F_MESSAGE))
		spy_line_lit(l, "null");
	else if (!failure_text(l, p, n, &pos))
		return 0;
	if (flags & SPY_REC_F_WHY) {
		spy_line_lit(l, ",\"why\":");
		if (!failure_text(l, p, n, &pos))
			return 0;
	}
	if (!spy_rec_get_uv(p, n, &pos, &count) || count > SPY_REC_RECENT_MAX)
		return 0;
	spy_line_lit(l, ",\"recent\":[");
	for (uint64_t i = 0; i < count; i++) {
		if (!spy_rec_get_uv(p, n, &pos, &fn) || !spy_rec_get_uv(p, n, &pos, &st))
			return 0;
		spy_recent_json(l, fn < _SPY_FN_COUNT ? (unsigned)fn : _SPY_FN_COUNT, spy_rec_unzigzag(st), &first);
	}
	spy_line_char(l, ']');
	if ((flags & SPY_REC_F_PYTHON) && (!spy_rec_get_uv(p, n, &pos, &pyid) || pyid == 0))
		return 0;
	if (pos != n || !stack(r, l, p, end, &at, 1) || at != end)
		return 0;
	if (pyid)
		python_frames(r, l, pyid);
	spy_line_char(l, '}');
	return !l->overflow;
}

/*
 * What may follow a traced call's arguments: its stack, then (version 7) its
 * Python frames' text id. A stack of no frames is there only before an id,
 * and shows nothing, as format 1 shows no stack for such a call.
 */
static int
call_tail(struct rec_reader *r, struct spy_line *l, const uint8_t *p, size_t n, size_t *pos)
{
	size_t at = *pos;
	uint64_t frames, id;

	if (!spy_rec_get_uv(p, n, &at, &frames))
		return 0;
	if (frames == 0)
		*pos = at;
	else if (!stack(r, l, p, n, pos, 0))
		return 0;
	if (*pos == n)
		return frames != 0;
	if (!spy_rec_get_uv(p, n, pos, &id) || id == 0)
		return 0;
	python_frames(r, l, id);
	return 1;
}

/*
 * A packed call as slowpath.c writes the JSON record of a traced call that
 * succeeded, or (`failure`) of a failed call; 0 when it is not one.
 */
static int
call_frame(struct rec_reader *r, const uint8_t *p, size_t n, int failure)
{
	struct spy_line *l = &r->out;
	size_t pos = 0;
	uint64_t dt, fn, status, dur, v;
	const struct spy_fn_info *f;
	unsigned copy;
	int64_t get_type = -1;	/* GetAttribute's attributeType */
	int get_count = 0;	/* and whether its elementCount was given */

	if (r->mismatch || !r->chunk || !spy_rec_get_uv(p, n, &pos, &dt) || !spy_rec_get_uv(p, n, &pos, &fn) ||
	    fn >= _SPY_FN_COUNT || pos + 2 > n)
		return 0;
	f = &spy_fn_info[fn];
	copy = p[pos++];
	spy_names_major = p[pos++];
	if (!spy_rec_get_uv(p, n, &pos, &status) || !spy_rec_get_uv(p, n, &pos, &dur))
		return 0;
	r->t_prev += (uint64_t)spy_rec_unzigzag(dt);
	spy_line_reset(l);
	/* A failed SetAttribute is not packed (recbin.c). */
	if (failure && fn == _SPY_FN_cudnnBackendSetAttribute)
		return 0;
	spy_call_fields(l, failure ? "failure" : "call", (unsigned)fn, spy_rec_unzigzag(status), copy, (long long)r->tid, r->t_prev, dur != 0,
			dur - 1);
	spy_line_lit(l, ",\"args\":{");
	if (fn == _SPY_FN_cudnnBackendSetAttribute) {
		if (!setattr_args(r, l, f, p, n, &pos))
			return 0;
		goto args_done;
	}
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *a = &f->params[i];
		double d;

		if (i)
			spy_line_char(l, ',');
		spy_line_key(l, a->name);
		if (a->kind == SPY_ARG_DOUBLE) {
			if (pos + 8 > n)
				return 0;
			memcpy(&d, p + pos, 8);
			pos += 8;
			spy_line_double(l, d);
			continue;
		}
		if (fn == _SPY_FN_cudnnBackendGetAttribute && i == 5 && get_count) {
			if (!getattr_array(r, l, get_type, p, n, &pos))
				return 0;
			continue;
		}
		if (a->kind == SPY_ARG_PTR) {
			size_t at = pos;
			uint64_t addr;

			if (!pointer_arg(r, l, a, p, n, &pos, failure))
				return 0;
			/* GetAttribute: with an elementCount, its array is packed by the attribute type. */
			if (fn == _SPY_FN_cudnnBackendGetAttribute && i == 4 && !failure)
				get_count = spy_rec_get_uv(p, n, &at, &addr) && addr != 0;
			continue;
		}
		if (!spy_rec_get_uv(p, n, &pos, &v))
			return 0;
		if (fn == _SPY_FN_cudnnBackendGetAttribute && i == 2)
			get_type = spy_rec_unzigzag(v);
		switch (a->kind) {
		case SPY_ARG_INT:
			spy_line_i64(l, spy_rec_unzigzag(v));
			break;
		case SPY_ARG_UINT:
			spy_line_u64(l, v);
			break;
		case SPY_ARG_ENUM:
			enum_value(l, a->enum_id, spy_rec_unzigzag(v));
			break;
		case SPY_ARG_HANDLE:
		case SPY_ARG_DESC:
			text(r, l, v);
			break;
		default:
			if (v)
				spy_line_hex(l, v);
			else
				spy_line_lit(l, "null");
		}
	}
args_done:
	spy_line_char(l, '}');
	if (failure)
		return failure_tail(r, l, p, n, pos);
	if (pos < n && !call_tail(r, l, p, n, &pos))
		return 0;
	spy_line_char(l, '}');
	return pos == n && !l->overflow;
}

/* A GPU time as gpu.c writes its JSON record; 0 when the frame is not one. */
static int
gpu_frame(struct rec_reader *r, const uint8_t *p, size_t n)
{
	struct spy_line *l = &r->out;
	uint64_t fn, tid, t_ns, gpu_ns;
	size_t pos = 0;
	unsigned copy;

	if (r->mismatch || !spy_rec_get_uv(p, n, &pos, &fn) || fn >= _SPY_FN_COUNT || pos >= n)
		return 0;
	copy = p[pos++];
	if (!spy_rec_get_uv(p, n, &pos, &tid) || tid > INT32_MAX || !spy_rec_get_uv(p, n, &pos, &t_ns) ||
	    !spy_rec_get_uv(p, n, &pos, &gpu_ns) || pos != n)
		return 0;
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"gpu\",\"fn\":");
	spy_line_name(l, spy_fn_info[fn].name);
	spy_line_lit(l, ",\"copy\":");
	spy_line_u64(l, copy);
	spy_line_lit(l, ",\"tid\":");
	spy_line_i64(l, (long long)tid);
	spy_line_lit(l, ",\"t_ns\":");
	spy_line_u64(l, t_ns);
	spy_line_lit(l, ",\"gpu_ns\":");
	spy_line_u64(l, gpu_ns);
	spy_line_char(l, '}');
	return !l->overflow;
}

/*
 * The frame at d[pos], as spy_rec_frame() walks it, for a file of the
 * format found: in format 1, which holds JSON lines only, no byte begins a
 * binary frame. Damage comes without its length: resync() says where
 * reading goes on.
 */
static enum spy_rec_walk
frame_at(const struct rec_reader *r, const uint8_t *d, size_t len, size_t pos, size_t *n)
{
	size_t at = pos + 1;
	uint64_t plen;

	if (d[pos] == '{')
		return spy_rec_frame(d, len, pos, n);
	if (r->format != REC_FORMAT_FRAMES || d[pos] < SPY_REC_FILE || d[pos] > SPY_REC_STATE)
		return SPY_REC_DAMAGED;
	if (!spy_rec_get_uv(d, len, &at, &plen)) {
		if (len - pos < 11) {
			*n = len - pos;
			return SPY_REC_CUT;
		}
		return SPY_REC_DAMAGED;
	}
	if (plen > SPY_REC_FRAME_MAX)
		return SPY_REC_DAMAGED;
	if (plen > len - at) {
		*n = len - pos;
		return SPY_REC_CUT;
	}
	*n = at - pos + (size_t)plen;
	return SPY_REC_WHOLE;
}

/*
 * 1 when `p` (SPY_REC_BLOCK_HEAD bytes) is a block's frame as the writer
 * makes it: committed within its capacity, a capacity no block exceeds.
 */
static int
block_head(const uint8_t *p, uint32_t *committed, uint32_t *capacity)
{
	uint32_t c = 0, cap = 0;

	if (p[0] != SPY_REC_BLOCK || p[1] != SPY_REC_BLOCK_HEAD - 2 || p[2] || p[3] || p[12] || p[13] || p[14] || p[15])
		return 0;
	for (int i = 0; i < 4; i++) {
		c |= (uint32_t)p[SPY_REC_BLOCK_COMMITTED + i] << (8 * i);
		cap |= (uint32_t)p[SPY_REC_BLOCK_CAPACITY + i] << (8 * i);
	}
	/* The largest block holds the largest record the library writes (SPY_LINE_MAX) and its frame. */
	if (c > cap || cap > (64u << 20) + 8192)
		return 0;
	if (committed)
		*committed = c;
	if (capacity)
		*capacity = cap;
	return 1;
}

/* resync(): the place depends on bytes not read yet. */
#define UNDECIDED ((size_t)-1)

/*
 * Where reading can go on after damage at `pos`: the next JSON line, or (in
 * format 2) the next chunk frame followed by a whole frame of a call or a
 * text (a chunk begins a thread's buffer, so times and the thread are known
 * again from there). The bytes to skip; all of them when there is no such
 * place; and UNDECIDED when a candidate runs past the bytes held and more
 * may follow (`more`): the answer must not depend on how much of the file is
 * in memory. What was ruled out before an UNDECIDED is not looked at again
 * once more bytes came (scan_for, scan_at), so that a long damaged part read
 * from a pipe in small pieces costs its length, not its square.
 */
static size_t
resync(struct rec_reader *r, size_t pos, int more)
{
	const uint8_t *d = r->buf;
	size_t len = r->end, from = pos + 1;
	unsigned long long here = r->offset + pos;

	if (r->scan_for == here && r->scan_at > here + 1 && r->scan_at - r->offset <= len)
		from = (size_t)(r->scan_at - r->offset);
	for (size_t p = from; p < len; p++) {
		size_t n, m;
		enum spy_rec_walk w;

		if (d[p] == '{' && d[p - 1] == '\n')
			return p - pos;
		if (d[p] == SPY_REC_BLOCK && r->format == REC_FORMAT_FRAMES) {
			if (p + SPY_REC_BLOCK_HEAD > len) {
				if (more)
					goto undecided;
				continue;
			}
			if (block_head(d + p, NULL, NULL))
				return p - pos;
			continue;
		}
		if (d[p] != SPY_REC_CHUNK || r->format != REC_FORMAT_FRAMES)
			continue;
		w = frame_at(r, d, len, p, &n);
		if (w == SPY_REC_CUT || (w == SPY_REC_WHOLE && p + n >= len)) {
			if (more)
				goto undecided;
			continue;
		}
		if (w != SPY_REC_WHOLE || n > 22 ||
		    (d[p + n] != SPY_REC_CALL && d[p + n] != SPY_REC_FAILURE && d[p + n] != SPY_REC_TEXT))
			continue;
		w = frame_at(r, d, len, p + n, &m);
		if (w == SPY_REC_CUT && more)
			goto undecided;
		if (w == SPY_REC_WHOLE)
			return p - pos;
		continue;
undecided:
		r->scan_for = here;
		r->scan_at = r->offset + p;
		return UNDECIDED;
	}
	if (!more)
		return len - pos;
	r->scan_for = here;
	r->scan_at = r->offset + (len > from ? len : from);
	return UNDECIDED;
}

/*
 * What the file is, from its first frame (docs/record-format.md): format 1
 * begins with a JSON line, format 2 with its file frame. Anything else is
 * refused whole (r->refused), and so is a file frame cut short or of a
 * length no file frame has: such bytes passed on as they are would read as
 * records, or as a format 1 file, where there is none. 0 when there is
 * nothing to read (an empty file, or one refused).
 */
static int
first_frame(struct rec_reader *r)
{
	for (;;) {
		const uint8_t *p = r->buf + r->start;
		size_t have = r->end - r->start, cmp;

		if (have == 0) {
			if (fill(r))
				continue;
			return 0;
		}
		if (p[0] == '{') {
			r->format = REC_FORMAT_JSON;
			return 1;
		}
		cmp = have < 10 ? have : 10;
		if (p[0] != SPY_REC_FILE || (cmp > 2 && memcmp(p + 2, SPY_REC_MAGIC, cmp - 2) != 0)) {
			r->refused = REC_NOT_RECORDS;
			return 0;
		}
		/* Its payload's length in one byte: the magic and the numbers after it (18 bytes, 22 from version 5). */
		if (have >= 2 && (p[1] < 18 || p[1] >= 0x80)) {
			r->refused = REC_FIRST_DAMAGED;
			return 0;
		}
		if (have >= 2 && have >= 2u + p[1]) {
			r->format = REC_FORMAT_FRAMES;
			return 1;
		}
		if (!fill(r)) {
			r->refused = REC_FIRST_CUT;
			r->cut_bytes = have;
			return 0;
		}
	}
}

const char *
rec_refused_why(const struct rec_reader *r)
{
	switch (r->refused) {
	case REC_NOT_RECORDS:
		return "not a record file: byte 0 begins neither a JSON line nor record format 2's file frame";
	case REC_FIRST_CUT:
		return "cut short inside its first frame (the file frame at byte 0): no record in it";
	case REC_FIRST_DAMAGED:
		return "damaged at byte 1: no file frame has the length it gives";
	}
	return NULL;
}

/* Reading goes on at file offset `to`, past bytes that are no frames; 0 when the file ends before it. */
static int
skip_to(struct rec_reader *r, unsigned long long to)
{
	while (r->offset + r->end < to) {
		r->start = r->end;
		if (!fill(r))
			return 0;
	}
	if (r->offset + r->start < to)
		r->start = (size_t)(to - r->offset);
	return 1;
}

/* Bytes that are no record, n at file offset `at`: counted for the caller to say. */
static void
count_damage(struct rec_reader *r, unsigned long long at, size_t n)
{
	if (!r->damaged)
		r->damage_at = at;
	r->damaged++;
	r->damage_bytes += n;
}

/* Damage whose bytes may have held anything: nothing read before it is trusted after it. */
static void
damage(struct rec_reader *r, unsigned long long at, size_t n)
{
	count_damage(r, at, n);
	/*
	 * A call is read again only after a chunk, which says whose it is and
	 * when; and no text is trusted: the damaged bytes may have held a newer
	 * one for its id.
	 */
	r->chunk = 0;
	forget_texts(r);
}

/*
 * A process's records end (the file's end, or the next process's file
 * frame): when it wrote no summary and left its counters, the summary they
 * give, 1; else 0, and the counters of the next process start from none.
 */
static int
process_end(struct rec_reader *r, const char **line, size_t *len, int *flags)
{
	int made = 0;

	/* First the records it kept up to date (the algo records its exit would have written), one per call. */
	while (rec_state_any(r->state) && !r->saw_summary && r->kept_given < rec_state_kept(r->state)) {
		const char *k = rec_state_kept_line(r->state, r->kept_given++);

		/* Given only as JSON: a crafted file's text is no record. */
		if (!rec_json_valid(k, strlen(k))) {
			count_damage(r, r->offset + r->start, strlen(k));
			continue;
		}
		*line = k;
		*len = strlen(k);
		*flags = 0;
		return 1;
	}
	if (rec_state_any(r->state) && !r->saw_summary && rec_state_summary(r->state, &r->out)) {
		*line = r->out.data;
		*len = r->out.len;
		*flags = 0;
		r->summaries_made++;
		made = 1;
	}
	rec_state_free(r->state);
	r->state = NULL;
	r->saw_summary = 0;
	r->kept_given = 0;
	return made;
}

int
rec_next(struct rec_reader *r, const char **line, size_t *len, int *flags)
{
	if (!r->format && !first_frame(r))
		return 0;
	for (;;) {
		size_t n, at;
		enum spy_rec_walk w;
		const uint8_t *p;
		unsigned long long here;
		uint64_t plen, a, b;

		size_t lim;
		int at_block_end = 0;

		if (r->start == r->end && !fill(r))
			return process_end(r, line, len, flags);
		if (r->in_block && r->offset + r->start >= r->block_frames_end) {
			/* A block's bytes past its committed frames are none: unwritten, or a frame its process did not finish. */
			if (!skip_to(r, r->block_end))
				return 0;
			r->in_block = 0;
			continue;
		}
		if (!r->in_block && r->format == REC_FORMAT_FRAMES && r->buf[r->start] == 0) {
			/* Zeros between frames: the rest of an extent the process did not fill before it ended. */
			while (r->start < r->end && r->buf[r->start] == 0)
				r->start++;
			continue;
		}
		lim = r->end;
		if (r->in_block && r->block_frames_end - r->offset <= r->end) {
			lim = (size_t)(r->block_frames_end - r->offset);
			at_block_end = 1;
		}
		w = frame_at(r, r->buf, lim, r->start, &n);
		if (w == SPY_REC_CUT && at_block_end) {
			/* A block commits whole frames only: one that runs past its committed end is damage. */
			w = SPY_REC_DAMAGED;
			n = lim - r->start;
		} else if (w == SPY_REC_DAMAGED && r->in_block) {
			/*
			 * Nothing inside a block's committed frames is trusted after damage: its end is where reading
			 * goes on, in pieces of at most a frame's length, read whole whatever the buffer held.
			 */
			unsigned long long want = r->block_frames_end - (r->offset + r->start);

			if (want > SPY_REC_FRAME_MAX)
				want = SPY_REC_FRAME_MAX;
			while (r->end - r->start < want && fill(r))
				;
			n = r->end - r->start < want ? r->end - r->start : (size_t)want;
		} else if (w == SPY_REC_DAMAGED) {
			/* Where to go on may lie in bytes not read yet; at the end, or with no room for more, it does not. */
			n = resync(r, r->start, !r->eof);
			if (n == UNDECIDED) {
				if (fill(r))
					continue;
				n = resync(r, r->start, 0);
			}
		}
		if (w == SPY_REC_CUT && !r->eof && fill(r))
			continue;
		p = r->buf + r->start;
		here = r->frame_at = r->offset + r->start;
		*flags = 0;
		/* A JSON frame is given as it is only when it is JSON: anything else would reach the output whole. */
		if (w == SPY_REC_WHOLE && p[0] == '{' && !rec_json_valid((const char *)p, n - 1))
			w = SPY_REC_DAMAGED;
		if (w == SPY_REC_CUT) {
			/* The file ends inside it: what an ending leaves, not damage. */
			r->cut++;
			r->cut_at = here;
			r->cut_bytes = n;
			*flags = REC_CUT;
		} else if (w == SPY_REC_DAMAGED) {
			damage(r, here, n);
			*flags = REC_DAMAGED;
		}
		/* The next process of concatenated files: this one's summary first, if it wrote none. */
		if (w == SPY_REC_WHOLE && p[0] == SPY_REC_FILE && r->have_file && process_end(r, line, len, flags))
			return 1;
		if (w != SPY_REC_WHOLE || p[0] == '{') {
			r->start += n;
			*line = (const char *)p;
			*len = n && p[n - 1] == '\n' ? n - 1 : n;
			if (w == SPY_REC_WHOLE) {
				r->records++;
				if (n > 18 && memcmp(p, "{\"event\":\"summary\"", 18) == 0)
					r->saw_summary = 1;
			}
			return 1;
		}
		r->start += n;
		at = 1;
		spy_rec_get_uv(p, n, &at, &plen);
		switch (p[0]) {
		case SPY_REC_FILE:
			file_frame(r, p + at, n - at);
			break;
		case SPY_REC_STATE:
			/* Counters of another function table are not summed by this one's. */
			if (r->mismatch)
				break;
			if (!r->state)
				r->state = rec_state_new();
			if (r->state && rec_state_frame(r->state, p + at, n - at))
				break;
			count_damage(r, here, n);
			*flags = REC_DAMAGED;
			*line = (const char *)p;
			*len = n;
			return 1;
		case SPY_REC_BLOCK: {
			uint32_t c, cap;

			if (!r->in_block && n == SPY_REC_BLOCK_HEAD && block_head(p, &c, &cap)) {
				r->in_block = 1;
				r->block_frames_end = here + n + c;
				r->block_end = here + n + cap;
				break;
			}
			damage(r, here, n);
			*flags = REC_DAMAGED;
			*line = (const char *)p;
			*len = n;
			return 1;
		}
		case SPY_REC_CHUNK:
			if (spy_rec_get_uv(p, n, &at, &a) && spy_rec_get_uv(p, n, &at, &b) && at == n) {
				r->tid = a;
				r->t_prev = b;
				r->chunk = 1;
				break;
			}
			/* Whose calls follow, and from when, is not known: none is read before the next chunk. */
			damage(r, here, n);
			*flags = REC_DAMAGED;
			*line = (const char *)p;
			*len = n;
			return 1;
		case SPY_REC_TEXT:
			if (spy_rec_get_uv(p, n, &at, &a) && keep_text(r, a, p + at, n - at, TEXT_FRAME_MAX))
				break;
			/*
			 * A text no spy writes (too long to be one, or no JSON): damage. Its id has no text now, and
			 * a call that names it says so: pasted into each call, it would be printed as many times.
			 */
			count_damage(r, here, n);
			*flags = REC_DAMAGED;
			*line = (const char *)p;
			*len = n;
			return 1;
		case SPY_REC_CALL:
		case SPY_REC_FAILURE:
			r->records++;
			if (call_frame(r, p + at, n - at, p[0] == SPY_REC_FAILURE)) {
				*line = r->out.data;
				*len = r->out.len;
				return 1;
			}
			if (!r->unreadable_calls)
				r->unreadable_at = here;
			r->unreadable_calls++;
			break;
		case SPY_REC_GPU:
			r->records++;
			if (gpu_frame(r, p + at, n - at)) {
				*line = r->out.data;
				*len = r->out.len;
				return 1;
			}
			if (!r->unreadable_calls)
				r->unreadable_at = here;
			r->unreadable_calls++;
			break;
		}
	}
}
