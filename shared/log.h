/*
 * Logging in the OpenBSD log.c style: stderr in the foreground (-d),
 * syslog or a log file otherwise.  Every line leaves in one write(2)
 * so lines of different processes never interleave.
 */
#ifndef VMCPD_LOG_H
#define VMCPD_LOG_H

#include <stdarg.h>

/* exit status of a deliberate fatal exit: the master does not respawn it */
#define EXIT_FATAL 2

void	log_init(int debug, const char *ident);
void	log_procinit(const char *procname);
void	log_setverbose(int verbose);
int	log_setfile(const char *path);	/* NULL: back to syslog/stderr */
int	log_reopen(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	vlog(int pri, const char *, va_list) __attribute__((format(printf, 2, 0)));
void	fatal(const char *, ...) __attribute__((noreturn, format(printf, 1, 2)));
void	fatalx(const char *, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
