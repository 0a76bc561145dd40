/*
 * OpenBSD-style logging.  A line is formatted into one buffer and sent
 * with a single write(2) (or syslog(3)), so that lines from several
 * processes sharing stderr or a log file never interleave.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 4000

static int	 log_debug_mode;
static int	 log_verbose;
static int	 log_journal;	/* stderr is systemd's journal stream */
static int	 log_fd = -1;
static char	*log_path;
static char	 log_proc[64] = "vmcpd";

/*
 * systemd sets JOURNAL_STREAM to the device and inode of the stream it
 * connects stdout and stderr to (systemd.exec(5)); when stderr is still
 * that stream, a line starts with its priority as "<N>" (sd-daemon(3))
 * and the journal stamps the time itself.
 */
static int
log_is_journal(void)
{
	const char		*env = getenv("JOURNAL_STREAM");
	unsigned long long	 dev, ino;
	struct stat		 sb;

	if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &sb) == -1)
		return 0;
	return (unsigned long long)sb.st_dev == dev &&
	    (unsigned long long)sb.st_ino == ino;
}

void
log_init(int debug, const char *ident)
{
	log_debug_mode = debug;
	log_journal = log_is_journal();
	if (ident != NULL)
		(void)snprintf(log_proc, sizeof(log_proc), "%s", ident);
	if (!debug)
		openlog("vmcpd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	tzset();
}

void
log_procinit(const char *procname)
{
	if (procname != NULL)
		(void)snprintf(log_proc, sizeof(log_proc), "%s", procname);
}

void
log_setverbose(int verbose)
{
	log_verbose = verbose;
}

int
log_setfile(const char *path)
{
	int	 fd = -1;
	char	*p = NULL;

	if (path != NULL) {
		if ((p = strdup(path)) == NULL)
			return -1;
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
		if (fd == -1) {
			free(p);
			return -1;
		}
	}
	if (log_fd != -1)
		close(log_fd);
	free(log_path);
	log_fd = fd;
	log_path = p;
	return 0;
}

int
log_reopen(void)
{
	int fd;

	if (log_path == NULL) {
		if (!log_debug_mode) {
			closelog();
			openlog("vmcpd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		}
		return 0;
	}
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd == -1)
		return -1;
	if (log_fd != -1)
		close(log_fd);
	log_fd = fd;
	return 0;
}

static const char *
log_prioname(int pri)
{
	switch (pri) {
	case LOG_CRIT:
		return "fatal";
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char		 line[LOG_LINE_MAX + 2];
	int		 n, m, saved_errno = errno;
	struct timespec	 ts;
	struct tm	 tm;

	if (log_fd == -1 && !log_debug_mode) {
		vsyslog(pri, fmt, ap);
		errno = saved_errno;
		return;
	}
	n = 0;
	if (log_fd == -1 && log_journal)
		n = snprintf(line, sizeof(line), "<%d>", pri);
	else if (log_fd != -1) {
		(void)clock_gettime(CLOCK_REALTIME, &ts);
		(void)gmtime_r(&ts.tv_sec, &tm);
		n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		m = snprintf(line + n, sizeof(line) - n, ".%03ldZ ",
		    ts.tv_nsec / 1000000);
		if (m > 0)
			n += m;
	}
	m = snprintf(line + n, LOG_LINE_MAX - n, "%s[%d]: %s: ", log_proc,
	    (int)getpid(), log_prioname(pri));
	if (m > 0 && n + m < LOG_LINE_MAX)
		n += m;
	m = vsnprintf(line + n, LOG_LINE_MAX - n, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > LOG_LINE_MAX)
		n = LOG_LINE_MAX;
	line[n++] = '\n';
	(void)!write(log_fd != -1 ? log_fd : STDERR_FILENO, line, n);
	errno = saved_errno;
}

/* the format is the caller's, checked at its call site */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void
log_with_errno(int pri, const char *emsg, va_list ap)
{
	char		 fmt[1024];
	int		 saved_errno = errno;
	const char	*err = strerror(saved_errno);

	/* a '%' in the error text must not act as a conversion */
	if (strchr(err, '%') != NULL ||
	    snprintf(fmt, sizeof(fmt), "%s: %s", emsg, err) >= (int)sizeof(fmt))
		vlog(pri, emsg, ap);
	else
		vlog(pri, fmt, ap);
	errno = saved_errno;
}
#pragma GCC diagnostic pop

void
log_warn(const char *emsg, ...)
{
	va_list ap;

	va_start(ap, emsg);
	log_with_errno(LOG_ERR, emsg, ap);
	va_end(ap);
}

void
log_warnx(const char *emsg, ...)
{
	va_list ap;

	va_start(ap, emsg);
	vlog(LOG_ERR, emsg, ap);
	va_end(ap);
}

void
log_info(const char *emsg, ...)
{
	va_list ap;

	va_start(ap, emsg);
	vlog(LOG_INFO, emsg, ap);
	va_end(ap);
}

void
log_debug(const char *emsg, ...)
{
	va_list ap;

	if (log_verbose) {
		va_start(ap, emsg);
		vlog(LOG_DEBUG, emsg, ap);
		va_end(ap);
	}
}

void
fatal(const char *emsg, ...)
{
	va_list ap;

	va_start(ap, emsg);
	log_with_errno(LOG_CRIT, emsg, ap);
	va_end(ap);
	exit(EXIT_FATAL);
}

void
fatalx(const char *emsg, ...)
{
	va_list ap;

	va_start(ap, emsg);
	vlog(LOG_CRIT, emsg, ap);
	va_end(ap);
	exit(EXIT_FATAL);
}
