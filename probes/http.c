/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http.c: the only libcurl user.  Fetches a fabric description from a
 * service (FabricURL=) through a cache file, and posts plan reports to a
 * collector (ReportURL=).
 *
 * Hygiene, every transfer: CURLOPT_NOSIGNAL (slurmstepd is multi-threaded
 * and has its own signal handlers), connection and whole-transfer timeouts,
 * a cap on the answer enforced in the write callback (and up front from
 * Content-Length), http and https only (also after redirects), TLS peer and
 * host name verification on, an optional CA bundle or folder, at most
 * DTPLAN_HTTP_MAX_REDIRECTS redirects for GET and none for POST.
 * libcurl is opened with dlopen() on the first transfer, never linked: a
 * command or job step that talks no HTTP (every sbatch, every job without
 * FabricURL= or ReportURL=) does not load it and the thirty-odd libraries
 * it brings (TLS, Kerberos, LDAP, ...).  It is opened, and
 * curl_global_init() run, once per process under pthread_once(), and never
 * undone: the plugin may be loaded into a process where other code uses
 * libcurl too (libcurl-thread(3), curl_global_init(3)).
 *
 * Timeouts only bound name resolution with a threaded or c-ares resolver
 * (CURLOPT_NOSIGNAL disables the alarm() one); Debian's libcurl has the
 * threaded one, and a build without CURL_VERSION_ASYNCHDNS says so in the
 * debug log.
 */
#include "config.h"

#include "dtplan.h"
#include "base/base.h"
#include "dtprobes.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* First line of a cache file: magic, fetch time, format, URL. */
#define CACHE_MAGIC "dtplan-fabric-cache/2"

/* Largest token file read. */
#define TOKEN_MAX 4096

/* The library the headers are for (libcurl's ABI 4 since 7.16). */
#define LIBCURL_SONAME "libcurl.so.4"

/* libcurl's functions, from dlopen() (global_init()). */
static struct {
	CURLcode (*global_init)(long flags);
	curl_version_info_data *(*version_info)(CURLversion age);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
} curl;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_code = CURLE_FAILED_INIT;
static char load_error[256]; /* why libcurl could not be opened; "" it was */

/* Opens libcurl and finds its functions; false with load_error set. */
static bool load_curl(void)
{
	static const struct {
		const char *name;
		void **fn;
	} syms[] = {
		{"curl_global_init", (void **)&curl.global_init},
		{"curl_version_info", (void **)&curl.version_info},
		{"curl_easy_init", (void **)&curl.easy_init},
		{"curl_easy_setopt", (void **)&curl.easy_setopt},
		{"curl_easy_perform", (void **)&curl.easy_perform},
		{"curl_easy_getinfo", (void **)&curl.easy_getinfo},
		{"curl_easy_cleanup", (void **)&curl.easy_cleanup},
		{"curl_easy_strerror", (void **)&curl.easy_strerror},
		{"curl_slist_append", (void **)&curl.slist_append},
		{"curl_slist_free_all", (void **)&curl.slist_free_all},
	};
	void *lib = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (lib == NULL) {
		snprintf(load_error, sizeof(load_error), "cannot load %s: %s", LIBCURL_SONAME,
			 dlerror());
		return false;
	}
	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(syms); i++) {
		*syms[i].fn = dlsym(lib, syms[i].name);
		if (*syms[i].fn == NULL) {
			snprintf(load_error, sizeof(load_error), "%s has no %s", LIBCURL_SONAME,
				 syms[i].name);
			return false; /* lib stays open: dlclose() is never safe here */
		}
	}
	return true;
}

static void global_init(void)
{
	const curl_version_info_data *v;

	if (!load_curl())
		return;
	init_code = curl.global_init(CURL_GLOBAL_DEFAULT);
	if (init_code != CURLE_OK)
		return;
	v = curl.version_info(CURLVERSION_NOW);
	if (v != NULL && !(v->features & CURL_VERSION_ASYNCHDNS))
		dtplan__log(DTPLAN_LOG_DEBUG,
			    "libcurl %s resolves names synchronously: name "
			    "lookups are not bounded by the HTTP timeouts",
			    v->version);
}

void dtplan_http_opts_from_config(struct dtplan_http_opts *o, const struct dtplan_config *c,
				  double timeout_s)
{
	memset(o, 0, sizeof(*o));
	o->timeout_s = timeout_s;
	o->connect_timeout_s = c->http_connect_timeout_s;
	o->max_bytes = c->http_max_bytes >= 1 && c->http_max_bytes < (double)SIZE_MAX / 2
			       ? (size_t)c->http_max_bytes
			       : 16000000;
	o->ca_path = c->http_ca_path;
	o->follow_redirects = true;
	o->sign = true;
	o->munge_socket = c->munge_socket;
}

/* The answer as it arrives, capped. */
struct sink {
	struct dtplan__text text; /* the answer as kept */
	size_t len, max;          /* bytes arrived, at most max */
	bool over;
	bool discard; /* a post's answer: counted up to max, kept nowhere */
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;

	if (n > s->max - s->len) {
		s->over = true;
		return 0; /* not n: libcurl stops with CURLE_WRITE_ERROR */
	}
	s->len += n;
	if (s->discard)
		return n;
	dtplan__text_put(&s->text, data, n);
	return s->text.failed ? 0 : n;
}

static long millis(double s)
{
	if (!(s > 0) || !isfinite(s))
		return 0;
	return s * 1000.0 >= (double)LONG_MAX ? LONG_MAX : (long)ceil(s * 1000.0);
}

/* The options every transfer gets.  False when libcurl refuses one. */
static bool common_options(CURL *h, const char *url, const struct dtplan_http_opts *o,
			   struct sink *s, char *errbuf)
{
	double connect = o->connect_timeout_s > 0 && o->connect_timeout_s < o->timeout_s
				 ? o->connect_timeout_s
				 : o->timeout_s;
	struct stat st;
	bool ok = true;

	ok &= curl.easy_setopt(h, CURLOPT_URL, url) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, millis(o->timeout_s)) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, millis(connect)) == CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85.0: the string forms; the bitmasks are deprecated */
	ok &= curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") == CURLE_OK;
#else
	ok &= curl.easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) ==
	      CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS,
			       (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) == CURLE_OK;
#endif
	ok &= curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, o->follow_redirects ? 1L : 0L) ==
	      CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_MAXREDIRS, (long)DTPLAN_HTTP_MAX_REDIRECTS) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK;
	if (o->ca_path != NULL && o->ca_path[0] != '\0') {
		if (stat(o->ca_path, &st) == 0 && S_ISDIR(st.st_mode))
			ok &= curl.easy_setopt(h, CURLOPT_CAPATH, o->ca_path) == CURLE_OK;
		else
			ok &= curl.easy_setopt(h, CURLOPT_CAINFO, o->ca_path) == CURLE_OK;
	}
	ok &= curl.easy_setopt(h, CURLOPT_USERAGENT, "dtplan/" PACKAGE_VERSION) == CURLE_OK;
	/* a known Content-Length over the cap fails before the body comes */
	ok &= curl.easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->max) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) == CURLE_OK;
	ok &= curl.easy_setopt(h, CURLOPT_WRITEDATA, s) == CURLE_OK;
	return ok;
}

/* Runs a prepared transfer and turns its outcome into an error naming url. */
static enum dtplan_err perform(CURL *h, const char *url, const struct dtplan_http_opts *o,
			       struct sink *s, char *errbuf, struct dtplan_error *err)
{
	char t[64], detail[CURL_ERROR_SIZE + 64];
	CURLcode rc = curl.easy_perform(h);
	long status = 0;

	/* A post's answer is not read: a collector that said 2xx got the
	 * report, however long its answer (it was said not to, issue 26). */
	if (s->discard && (rc == CURLE_FILESIZE_EXCEEDED || (rc == CURLE_WRITE_ERROR && s->over)) &&
	    curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status >= 200 &&
	    status < 300)
		return DTPLAN_OK;
	if (rc != CURLE_OK)
		snprintf(detail, sizeof(detail), "%s", errbuf[0] ? errbuf : curl.easy_strerror(rc));
	switch (rc) {
	case CURLE_OK:
		break;
	case CURLE_OPERATION_TIMEDOUT:
		return dtplan__error(err, DTPLAN_ERR_TIMEOUT, url, 0, "no answer within %s (%s)",
				     dtplan_format_time(o->timeout_s, t, sizeof(t)), detail);
	case CURLE_FILESIZE_EXCEEDED:
		return dtplan__error(err, DTPLAN_ERR_RANGE, url, 0,
				     "the answer is larger than the %zu bytes allowed "
				     "(HttpMaxSize=)",
				     o->max_bytes);
	case CURLE_WRITE_ERROR:
		if (s->over)
			return dtplan__error(err, DTPLAN_ERR_RANGE, url, 0,
					     "the answer is larger than the %zu bytes allowed "
					     "(HttpMaxSize=)",
					     o->max_bytes);
		return dtplan__error(err, DTPLAN_ERR_NOMEM, url, 0, "out of memory");
	case CURLE_TOO_MANY_REDIRECTS:
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0, "more than %d redirects (%s)",
				     DTPLAN_HTTP_MAX_REDIRECTS, detail);
	case CURLE_UNSUPPORTED_PROTOCOL:
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0,
				     "not an http or https address, or redirected to one (%s)",
				     detail);
	default:
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0, "%s", detail);
	}
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 300 && status < 400 && !o->follow_redirects)
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0,
				     "HTTP %ld: redirects are not followed here; give the final "
				     "address",
				     status);
	if (status < 200 || status >= 300)
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0, "HTTP %ld", status);
	return DTPLAN_OK;
}

/* A new handle in *h (NULL on error). */
static enum dtplan_err open_handle(const char *url, const struct dtplan_http_opts *o, CURL **h,
				   struct dtplan_error *err)
{
	*h = NULL;
	if (url == NULL || o == NULL || !(o->timeout_s > 0) || o->max_bytes == 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, url ? url : "", 0,
				     "no URL, or no time or size bound");
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
		return dtplan__error(err, DTPLAN_ERR_INVAL, url, 0,
				     "not an http:// or https:// URL");
	pthread_once(&init_once, global_init);
	if (load_error[0] != '\0')
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0, "%s", load_error);
	if (init_code != CURLE_OK)
		return dtplan__error(err, DTPLAN_ERR_IO, url, 0, "cannot initialise libcurl: %s",
				     curl.easy_strerror(init_code));
	*h = curl.easy_init();
	if (*h == NULL)
		return dtplan__error(err, DTPLAN_ERR_NOMEM, url, 0,
				     "cannot create a libcurl handle");
	return DTPLAN_OK;
}

enum dtplan_err dtplan_http_get(const char *url, const struct dtplan_http_opts *o, char **body,
				size_t *len, char *type, size_t type_size, struct dtplan_error *err)
{
	char errbuf[CURL_ERROR_SIZE] = "", *ct = NULL;
	struct sink s = {0};
	enum dtplan_err rv;
	CURL *h;

	if (body != NULL)
		*body = NULL;
	if (len != NULL)
		*len = 0;
	if (type != NULL && type_size > 0)
		type[0] = '\0';
	if (body == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, url ? url : "", 0, "no output pointer");
	rv = open_handle(url, o, &h, err);
	if (rv != DTPLAN_OK)
		return rv;
	s.max = o->max_bytes;
	if (!common_options(h, url, o, &s, errbuf) ||
	    curl.easy_setopt(h, CURLOPT_HTTPGET, 1L) != CURLE_OK) {
		rv = dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, url, 0,
				   "libcurl refused an option: %s", errbuf);
		goto out;
	}
	rv = perform(h, url, o, &s, errbuf, err);
	if (rv != DTPLAN_OK)
		goto out;
	/* the last answer's (after redirects); NULL when it sent none */
	if (type != NULL && type_size > 0 &&
	    curl.easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != NULL)
		dtplan__strlcpy(type, ct, type_size);
	*body = dtplan__text_take(&s.text);
	if (*body == NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, url, 0, "out of memory");
		goto out;
	}
	if (len != NULL)
		*len = s.len;
out:
	dtplan__text_fini(&s.text);
	curl.easy_cleanup(h);
	return rv;
}

enum dtplan_err dtplan_http_post_json(const char *url, const struct dtplan_http_opts *o,
				      const char *json, struct dtplan_error *err)
{
	struct dtplan_http_opts post;
	struct curl_slist *headers = NULL, *tmp;
	char errbuf[CURL_ERROR_SIZE] = "", *auth = NULL, *cred = NULL, *signature = NULL;
	struct dtplan_error cerr = {0};
	struct sink s = {0};
	enum dtplan_err rv;
	CURL *h;

	if (json == NULL || o == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, url ? url : "", 0, "nothing to post");
	post = *o;
	post.follow_redirects = false;
	rv = open_handle(url, &post, &h, err);
	if (rv != DTPLAN_OK)
		return rv;
	if (post.sign) {
		/* the credential binds this body; its making counts against the bound */
		struct timespec t0, t1;
		double spent;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (dtplan_report_cred_make(post.munge_socket, json, strlen(json), post.timeout_s,
					    &signature, &cerr) != DTPLAN_OK)
			dtplan__log(DTPLAN_LOG_DEBUG, "%s: posting without a credential: %s",
				    url != NULL ? url : "", cerr.text);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		spent = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (!(post.timeout_s - spent >= 0.001)) {
			rv = dtplan__error(err, DTPLAN_ERR_TIMEOUT, url, 0,
					   "munged took the whole %.2f s of the post",
					   post.timeout_s);
			goto out;
		}
		post.timeout_s -= spent;
	}
	s.max = post.max_bytes; /* the collector's answer is read and dropped */
	s.discard = true;
	rv = dtplan__error(err, DTPLAN_ERR_NOMEM, url, 0, "out of memory");
	tmp = curl.slist_append(headers, "Content-Type: application/json");
	if (tmp == NULL)
		goto out;
	headers = tmp;
	/* no "Expect: 100-continue" (libcurl adds it to large bodies): a
	 * collector that does not answer it would cost a second of the bound */
	tmp = curl.slist_append(headers, "Expect:");
	if (tmp == NULL)
		goto out;
	headers = tmp;
	if (post.bearer_token != NULL && post.bearer_token[0] != '\0') {
		if (asprintf(&auth, "Authorization: Bearer %s", post.bearer_token) < 0) {
			auth = NULL;
			goto out;
		}
		tmp = curl.slist_append(headers, auth);
		if (tmp == NULL)
			goto out;
		headers = tmp;
	}
	if (signature != NULL) {
		if (asprintf(&cred, "%s: %s", DTPLAN_REPORT_CRED_HEADER, signature) < 0) {
			cred = NULL;
			goto out;
		}
		tmp = curl.slist_append(headers, cred);
		if (tmp == NULL)
			goto out;
		headers = tmp;
	}
	if (!common_options(h, url, &post, &s, errbuf) ||
	    curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers) != CURLE_OK ||
	    curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(json)) !=
		    CURLE_OK ||
	    curl.easy_setopt(h, CURLOPT_POSTFIELDS, json) != CURLE_OK) {
		rv = dtplan__error(err, DTPLAN_ERR_UNSUPPORTED, url, 0,
				   "libcurl refused an option: %s", errbuf);
		goto out;
	}
	rv = perform(h, url, &post, &s, errbuf, err);
	if (rv != DTPLAN_OK && post.sign && signature == NULL && err != NULL) {
		size_t n = strlen(err->text);

		snprintf(err->text + n, sizeof(err->text) - n, " (posted without a credential: %s)",
			 cerr.text);
	}
out:
	curl.easy_cleanup(h);
	curl.slist_free_all(headers);
	if (auth != NULL) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	free(cred);
	free(signature);
	dtplan__text_fini(&s.text);
	return rv;
}

enum dtplan_err dtplan_http_read_token(const char *path, char **token, struct dtplan_error *err)
{
	char buf[TOKEN_MAX + 1];
	struct stat st;
	ssize_t n = 0;
	size_t a, b;
	int fd = -1;
	enum dtplan_err rv;

	if (token != NULL)
		*token = NULL;
	if (path == NULL || token == NULL)
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no token file given");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "not a regular file");
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, path, 0,
				   "owned by uid %u: a token file must belong to root",
				   (unsigned)st.st_uid);
		goto out;
	}
	if ((st.st_mode & 077) != 0) {
		rv = dtplan__error(err, DTPLAN_ERR_POLICY, path, 0,
				   "mode %04o lets others read or change it: chmod 0600 it",
				   (unsigned)(st.st_mode & 07777));
		goto out;
	}
	do
		n = read(fd, buf, TOKEN_MAX);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		rv = dtplan__error(err, DTPLAN_ERR_IO, path, 0, "cannot read: %s", strerror(errno));
		goto out;
	}
	buf[n] = '\0';
	for (a = 0; buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r' || buf[a] == '\n'; a++)
		;
	b = a + strcspn(buf + a, "\r\n");
	while (b > a && (buf[b - 1] == ' ' || buf[b - 1] == '\t'))
		b--;
	if (b == a || memchr(buf, '\0', (size_t)n) != NULL) {
		rv = dtplan__error(err, DTPLAN_ERR_PARSE, path, 0, "holds no token");
		goto out;
	}
	*token = strndup(buf + a, b - a);
	rv = *token != NULL ? DTPLAN_OK
			    : dtplan__error(err, DTPLAN_ERR_NOMEM, path, 0, "out of memory");
out:
	memset(buf, 0, sizeof(buf));
	if (fd >= 0)
		close(fd);
	return rv;
}

/* ---- the fabric and its cache ---- */

/* snprintf where truncating a long message (URL, paths, fault) is fine. */
static void say(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* A cached answer: its body (owned), its format and when it was fetched. */
struct cached {
	char *body;
	size_t len;
	enum dtplan_fabric_format format;
	double age_s;
};

/* The format named word (dtplan_fabric_format_name()); false for none. */
static bool format_named(const char *word, size_t n, enum dtplan_fabric_format *f)
{
	static const enum dtplan_fabric_format all[] = {DTPLAN_FABRIC_JSON,
							DTPLAN_FABRIC_TOPOLOGY_CONF};

	for (size_t i = 0; i < DTPLAN_ARRAY_SIZE(all); i++) {
		const char *name = dtplan_fabric_format_name(all[i]);

		if (strlen(name) == n && strncmp(word, name, n) == 0) {
			*f = all[i];
			return true;
		}
	}
	return false;
}

/* Reads the cache file for c's URL.  False with why (for the warning). */
static bool cache_read(const struct dtplan_config *c, struct cached *out, char *why, size_t size)
{
	struct dtplan_error e = {0};
	char *text = NULL, *nl, *url, *fmt, *end, buf[600];
	long long fetched;
	size_t len = 0;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (c->fabric_cache[0] == '\0') {
		say(why, size, "no cache (FabricCache= is not set)");
		return false;
	}
	if (dtplan_file_read(c->fabric_cache, DTPLAN_FILE_FABRIC_CACHE, &text, &len, &e) !=
	    DTPLAN_OK) {
		say(why, size, "no cached answer: %s", dtplan_error_format(&e, buf, sizeof(buf)));
		return false;
	}
	nl = strchr(text, '\n');
	if (nl == NULL || strncmp(text, CACHE_MAGIC " ", strlen(CACHE_MAGIC) + 1) != 0) {
		say(why, size, "%s is not a dtplan fabric cache", c->fabric_cache);
		goto out;
	}
	*nl = '\0';
	errno = 0;
	fetched = strtoll(text + strlen(CACHE_MAGIC) + 1, &end, 10);
	fmt = end + 1;
	url = *end == ' ' ? strchr(fmt, ' ') : NULL;
	if (errno != 0 || url == NULL || !format_named(fmt, (size_t)(url - fmt), &out->format)) {
		say(why, size, "%s is not a dtplan fabric cache", c->fabric_cache);
		goto out;
	}
	url++;
	if (strcmp(url, c->fabric_url) != 0) {
		say(why, size, "the cache %s holds the answer of another URL (%.200s)",
		    c->fabric_cache, url);
		goto out;
	}
	/* the body moves to the front of the buffer */
	out->len = len - (size_t)(nl + 1 - text);
	memmove(text, nl + 1, out->len + 1);
	out->body = text;
	text = NULL;
	out->age_s = difftime(time(NULL), (time_t)fetched);
	if (out->age_s < 0)
		out->age_s = 0; /* a clock set back: as good as new */
	ok = true;
out:
	free(text);
	return ok;
}

/* Writes body as the cache of c's URL: a temporary file renamed over it. */
static void cache_write(const struct dtplan_config *c, const char *body, size_t len,
			enum dtplan_fabric_format format)
{
	char tmp[sizeof(c->fabric_cache) + 16], head[512];
	size_t hlen, done = 0;
	int fd, saved;
	bool ok;

	if (c->fabric_cache[0] == '\0')
		return;
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", c->fabric_cache);
	fd = mkstemp(tmp);
	if (fd < 0) {
		dtplan__log(DTPLAN_LOG_WARNING, "fabric cache %s: cannot write: %s",
			    c->fabric_cache, strerror(errno));
		return;
	}
	hlen = (size_t)snprintf(head, sizeof(head), "%s %lld %s %s\n", CACHE_MAGIC,
				(long long)time(NULL), dtplan_fabric_format_name(format),
				c->fabric_url);
	ok = fchmod(fd, 0644) == 0 && write(fd, head, hlen) == (ssize_t)hlen;
	while (ok && done < len) {
		ssize_t w = write(fd, body + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		ok = w > 0;
		if (ok)
			done += (size_t)w;
	}
	saved = errno;
	ok = close(fd) == 0 && ok;
	if (ok && rename(tmp, c->fabric_cache) == 0)
		return;
	if (!ok)
		errno = saved ? saved : errno;
	dtplan__log(DTPLAN_LOG_WARNING, "fabric cache %s: cannot write: %s", c->fabric_cache,
		    strerror(errno));
	unlink(tmp);
}

void dtplan_fabric_fetch_fini(struct dtplan_fabric_fetch *f)
{
	if (f == NULL)
		return;
	dtplan_fabric_desc_destroy(f->desc);
	memset(f, 0, sizeof(*f));
}

/* An age for people: whole seconds up to two minutes ("0 s", "42 s"), then
 * dtplan_format_time()'s "2m 05s", "3h 12m". */
static void format_age(double s, char *buf, size_t size)
{
	if (s < 120.0)
		snprintf(buf, size, "%.0f s", floor(s));
	else
		dtplan_format_time(s, buf, size);
}

/* Parses the cached answer into *desc; false (why filled) when it does not parse. */
static bool parse_cache(const struct dtplan_config *c, const struct cached *k, const char *nodes,
			struct dtplan_fabric_desc **desc, char *why, size_t size)
{
	struct dtplan_error e = {0};
	char buf[600];

	if (dtplan_fabric_desc_parse_for(k->body, k->len, k->format, c->fabric_cache, nodes, desc,
					 &e) != DTPLAN_OK) {
		say(why, size, "the cached answer does not parse: %s",
		    dtplan_error_format(&e, buf, sizeof(buf)));
		return false;
	}
	/* the fabric is the service's: messages name its URL */
	dtplan__strlcpy((*desc)->source, c->fabric_url, sizeof((*desc)->source));
	return true;
}

enum dtplan_err dtplan_fabric_fetch(const struct dtplan_config *c, bool offline,
				    struct dtplan_fabric_fetch *out, struct dtplan_error *err)
{
	return dtplan_fabric_fetch_for(c, offline, NULL, out, err);
}

enum dtplan_err dtplan_fabric_fetch_for(const struct dtplan_config *c, bool offline,
					const char *nodes, struct dtplan_fabric_fetch *out,
					struct dtplan_error *err)
{
	struct dtplan_fabric_desc *cached = NULL;
	struct dtplan_http_opts o;
	struct dtplan_error e = {0};
	struct cached k = {0};
	char why[600] = "", fault[700] = "", age[64] = "", ttl[64], type[256], *body = NULL;
	enum dtplan_fabric_format format = DTPLAN_FABRIC_JSON;
	size_t len = 0;
	enum dtplan_err rv;

	if (out == NULL || c == NULL || c->fabric_url[0] == '\0')
		return dtplan__error(err, DTPLAN_ERR_INVAL, "", 0, "no FabricURL= to fetch");
	memset(out, 0, sizeof(*out));
	if (cache_read(c, &k, why, sizeof(why)) &&
	    parse_cache(c, &k, nodes, &cached, why, sizeof(why)))
		format_age(k.age_s, age, sizeof(age));
	dtplan_format_time(c->fabric_cache_ttl_s, ttl, sizeof(ttl));
	/* 1. a fresh cached answer: no need to ask */
	if (cached != NULL && k.age_s < c->fabric_cache_ttl_s)
		goto use_cache;
	if (offline) {
		if (cached != NULL)
			say(out->warning, sizeof(out->warning),
			    "fabric service %s: not asked from an srun step; its answer "
			    "cached in %s is %s old (FabricCacheTTL=%s)",
			    c->fabric_url, c->fabric_cache, age, ttl);
		else
			say(out->warning, sizeof(out->warning),
			    "fabric service %s: not asked from an srun step; %s", c->fabric_url,
			    why);
		goto use_cache;
	}
	/* 2. ask */
	dtplan_http_opts_from_config(&o, c, c->fabric_timeout_s);
	rv = dtplan_http_get(c->fabric_url, &o, &body, &len, type, sizeof(type), &e);
	/* the format the site names, else the one the answer's type names */
	if (rv == DTPLAN_OK && c->fabric_format == DTPLAN_FABRIC_ANSWER_JSON)
		format = DTPLAN_FABRIC_JSON;
	else if (rv == DTPLAN_OK && c->fabric_format == DTPLAN_FABRIC_ANSWER_TOPOLOGY_CONF)
		format = DTPLAN_FABRIC_TOPOLOGY_CONF;
	else if (rv == DTPLAN_OK)
		rv = dtplan_fabric_format_of_type(type, c->fabric_url, &format, &e);
	if (rv == DTPLAN_OK) {
		rv = dtplan_fabric_desc_parse_for(body, len, format, c->fabric_url, nodes,
						  &out->desc, &e);
		if (rv == DTPLAN_OK) {
			out->origin = DTPLAN_FABRIC_ORIGIN_SERVICE;
			cache_write(c, body, len, format);
			goto done;
		}
		/* the URL is said once, below */
		if (e.line > 0)
			say(fault, sizeof(fault), "the answer is not a fabric: line %d: %s", e.line,
			    e.text);
		else
			say(fault, sizeof(fault), "the answer is not a fabric: %s", e.text);
	} else {
		say(fault, sizeof(fault), "%s", e.text);
	}
	if (rv == DTPLAN_ERR_NOMEM) {
		rv = dtplan__error(err, DTPLAN_ERR_NOMEM, c->fabric_url, 0, "out of memory");
		goto out;
	}
	/* 3. the cached answer of any age, 4. nothing */
	if (cached != NULL)
		say(out->warning, sizeof(out->warning),
		    "fabric service %s: %s; using its answer cached in %s %s ago", c->fabric_url,
		    fault, c->fabric_cache, age);
	else
		say(out->warning, sizeof(out->warning), "fabric service %s: %s; %s", c->fabric_url,
		    fault, why);
use_cache:
	if (cached != NULL) {
		out->origin = DTPLAN_FABRIC_ORIGIN_CACHE;
		out->desc = cached;
		out->age_s = k.age_s;
		cached = NULL;
	}
done:
	rv = DTPLAN_OK;
out:
	dtplan_fabric_desc_destroy(cached);
	free(body);
	free(k.body);
	return rv;
}
