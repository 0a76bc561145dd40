/*
 * vmcpd: a Virtual MCP Server.  Option parsing, the configuration test
 * (-n), privilege drop and daemonisation, then the master loop.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/config.h"
#include "shared/log.h"
#include "master.h"

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: vmcpd [-dnv] [-f file]\n");
	exit(1);
}

static struct config *
main_load(const char *file, char *err, size_t errlen)
{
	if (file != NULL)
		return config_load_file(file, err, errlen);
	if (access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		return config_load_file(CONFIG_DEFAULT_PATH, err, errlen);
	return config_load_buffer(CONFIG_EMBEDDED_NAME, config_embedded,
	    config_embedded_len, err, errlen);
}

/* mkdir -p with mode 0700 for the last component */
static int
main_mkdirs(const char *path)
{
	char	buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0700) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* make paths absolute: the daemon chdirs to / and reloads later */
static int
main_absolute(char **path)
{
	char	buf[PATH_MAX], cwd[PATH_MAX], *p;

	if (*path == NULL || (*path)[0] == '/' ||
	    strcmp(*path, CONFIG_EMBEDDED_NAME) == 0)
		return 0;
	if (realpath(*path, buf) == NULL) {
		if (errno != ENOENT || getcwd(cwd, sizeof(cwd)) == NULL)
			return -1;
		if (snprintf(buf, sizeof(buf), "%s/%s", cwd, *path) >=
		    (int)sizeof(buf)) {
			errno = ENAMETOOLONG;
			return -1;
		}
	}
	if ((p = strdup(buf)) == NULL)
		return -1;
	free(*path);
	*path = p;
	return 0;
}

static int
main_drop_privileges(const struct config *conf)
{
	struct passwd *pw;

	if (conf->cf_user == NULL)
		return 0;
	if ((pw = getpwnam(conf->cf_user)) == NULL) {
		log_warnx("daemon.user: no such user: %s", conf->cf_user);
		return -1;
	}
	if (geteuid() != 0) {
		if (geteuid() == pw->pw_uid)
			return 0;
		log_warnx("daemon.user %s: vmcpd must start as root to "
		    "become another user", conf->cf_user);
		return -1;
	}
	if (chown(conf->cf_state_dir, pw->pw_uid, pw->pw_gid) == -1) {
		log_warn("chown %s", conf->cf_state_dir);
		return -1;
	}
	if (setgroups(1, &pw->pw_gid) == -1 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) == -1 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1) {
		log_warn("cannot drop privileges to %s", conf->cf_user);
		return -1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	struct config	*conf;
	const char	*file = NULL;
	char		 err[CONFIG_ERR_MAX];
	int		 ch, debug = 0, noaction = 0, verbose = 0;
	size_t		 i;

	while ((ch = getopt(argc, argv, "df:nv")) != -1) {
		switch (ch) {
		case 'd':
			debug = 1;
			break;
		case 'f':
			file = optarg;
			break;
		case 'n':
			noaction = 1;
			break;
		case 'v':
			verbose++;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	log_init(1, "vmcpd");
	log_setverbose(verbose);
	if ((conf = main_load(file, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	config_warn(conf, stderr, noaction);
	if (noaction) {
		if (master_check_audit(conf, 0) == -1)
			exit(1);
		fprintf(stderr, "%s: configuration OK\n", conf->cf_file);
		config_free(conf);
		exit(0);
	}
	if (conf->cf_verbose && verbose == 0)
		log_setverbose(1);
	if (main_mkdirs(conf->cf_state_dir) == -1) {
		fprintf(stderr, "vmcpd: state directory %s: %s\n",
		    conf->cf_state_dir, strerror(errno));
		exit(1);
	}
	/* stdio backends run where vmcpd was started, not in / */
	for (i = 0; i < conf->cf_nbackends; i++) {
		struct config_backend *be = &conf->cf_backends[i];

		if (be->cb_transport != TRANSPORT_STDIO)
			continue;
		if (be->cb_cwd == NULL && (be->cb_cwd = strdup(".")) == NULL) {
			fprintf(stderr, "vmcpd: %s\n", strerror(errno));
			exit(1);
		}
		if (main_absolute(&be->cb_cwd) == -1) {
			fprintf(stderr, "vmcpd: backend %s: cwd %s: %s\n",
			    be->cb_name, be->cb_cwd, strerror(errno));
			exit(1);
		}
	}
	if (main_absolute(&conf->cf_state_dir) == -1 ||
	    main_absolute(&conf->cf_file) == -1 ||
	    main_absolute(&conf->cf_port_file) == -1 ||
	    main_absolute(&conf->cf_log_file) == -1) {
		fprintf(stderr, "vmcpd: %s\n", strerror(errno));
		exit(1);
	}
	if (conf->cf_log_file != NULL && log_setfile(conf->cf_log_file) == -1) {
		fprintf(stderr, "vmcpd: log file %s: %s\n", conf->cf_log_file,
		    strerror(errno));
		exit(1);
	}
	if (main_drop_privileges(conf) == -1)
		exit(1);
	if (!debug) {
		log_init(0, "vmcpd");
		if (daemon(0, 0) == -1)
			fatal("daemon");
	}
	master_run(conf, debug);
}
