/*
 * The CUDA toolkits that /usr/local/cuda, CUDA_HOME and CUDA_PATH name:
 * where each points, its version (read from its files, nothing run), and
 * the cuDNN copy in its library directories.
 */
#include "scan-int.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* At most 64 KiB of a small text file, NUL-terminated; NULL when it cannot be read. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = scan_xmalloc(65537);
	n = fread(buf, 1, 65536, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Copies a version ("13.0.96") from p into out: digits and dots only. */
static int
take_version(const char *p, char *out, size_t n)
{
	size_t len = strspn(p, "0123456789.");

	while (len && p[len - 1] == '.')
		len--;
	if (len == 0 || len >= n || p[0] == '.')
		return 0;
	memcpy(out, p, len);
	out[len] = '\0';
	return 1;
}

/*
 * The toolkit's version: version.json ("cuda": {"version": ...}, CUDA
 * 11.1 and later), version.txt (older), the runtime's full-version file
 * name, the runtime's dist-info (toolkits assembled from the pip wheels,
 * such as /usr/local/cuda-13.0 here), then CUDART_VERSION in its header.
 */
static void
toolkit_version(struct scan_toolkit *t)
{
	static const char *const libdirs[] = { "lib64", "lib", "targets/*/lib", NULL };
	char *file, *text, *p;
	glob_t g;

	file = scan_xasprintf("%s/version.json", t->path);
	text = slurp(file);
	if (text && (p = strstr(text, "\"cuda\"")) && (p = strstr(p, "\"version\"")) && (p = strchr(p + 9, '"')) &&
	    take_version(p + 1, t->version, sizeof(t->version))) {
		t->version_from = file;
		free(text);
		return;
	}
	free(text);
	free(file);
	file = scan_xasprintf("%s/version.txt", t->path);
	text = slurp(file);
	if (text && (p = strstr(text, "CUDA Version ")) && take_version(p + 13, t->version, sizeof(t->version))) {
		t->version_from = file;
		free(text);
		return;
	}
	free(text);
	free(file);
	for (size_t i = 0; libdirs[i]; i++) {
		char *pattern = scan_xasprintf("%s/%s/libcudart.so.*.*", t->path, libdirs[i]);

		memset(&g, 0, sizeof(g));
		if (glob(pattern, 0, NULL, &g) == 0) {
			for (size_t k = g.gl_pathc; k-- > 0;) {
				const char *v = strstr(scan_base_name(g.gl_pathv[k]), ".so.") + 4;

				if (strchr(v, '.') && strspn(v, "0123456789.") == strlen(v) &&
				    take_version(v, t->version, sizeof(t->version))) {
					t->version_from = scan_xstrdup(g.gl_pathv[k]);
					break;
				}
				t->version[0] = '\0';
			}
		}
		globfree(&g);
		free(pattern);
		if (t->version_from)
			return;
	}
	{
		char *pattern = scan_xasprintf("%s/dist-info/nvidia_cuda_runtime*-*.dist-info", t->path);

		memset(&g, 0, sizeof(g));
		if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
			const char *dash = strchr(scan_base_name(g.gl_pathv[g.gl_pathc - 1]), '-');

			if (dash && take_version(dash + 1, t->version, sizeof(t->version)))
				t->version_from = scan_xstrdup(g.gl_pathv[g.gl_pathc - 1]);
		}
		globfree(&g);
		free(pattern);
		if (t->version_from)
			return;
	}
	file = scan_xasprintf("%s/include/cuda_runtime_api.h", t->path);
	text = slurp(file);
	if (text && (p = strstr(text, "#define CUDART_VERSION"))) {
		long v = strtol(p + 22, NULL, 10);

		if (v >= 1000 && v < 1000000) {
			snprintf(t->version, sizeof(t->version), "%ld.%ld", v / 1000, v % 1000 / 10);
			t->version_from = file;
			free(text);
			return;
		}
	}
	free(text);
	free(file);
}

void
scan_add_toolkit(struct scan_result *r, const char *what, const char *path)
{
	struct scan_toolkit *t;
	struct stat st;

	if (!path || !path[0] || r->ntoolkits >= sizeof(r->toolkits) / sizeof(r->toolkits[0]))
		return;
	/* /usr/local/cuda is named only when it is there; a variable is named whatever it says. */
	if (strcmp(what, "/usr/local/cuda") == 0 && lstat(path, &st) != 0)
		return;
	t = &r->toolkits[r->ntoolkits++];
	memset(t, 0, sizeof(*t));
	t->what = what;
	t->path = scan_xstrdup(path);
	t->real = realpath(path, NULL);
	if (t->real)
		toolkit_version(t);
}

void
scan_toolkit_copies(struct scan_result *r)
{
	for (size_t i = 0; i < r->ntoolkits; i++) {
		struct scan_toolkit *t = &r->toolkits[i];

		for (size_t k = 0; t->real && k < r->ncopies && !t->copy; k++) {
			const char *dir = r->copies[k]->dir;
			size_t n = strlen(t->real);

			if (strncmp(dir, t->real, n) == 0 && dir[n] == '/' &&
			    (strcmp(dir + n, "/lib64") == 0 || strcmp(dir + n, "/lib") == 0 ||
			     strncmp(dir + n, "/targets/", 9) == 0) && scan_copy_has_content(r->copies[k]))
				t->copy = r->copies[k]->id;
		}
	}
}
