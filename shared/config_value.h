/*
 * vmcpd.yaml's value parsers and checks (config.h), exposed for the
 * checks that share them and for unit tests.
 */
#ifndef VMCPD_CONFIG_VALUE_H
#define VMCPD_CONFIG_VALUE_H

#include <stddef.h>
#include <stdint.h>

/* value parsers, exposed for unit tests: 0 ok, -1 bad; a duration
 * over 2^64 - 1 ns is -2 */
int		 config_parse_duration(const char *, uint64_t *ms);
int		 config_parse_size(const char *, uint64_t *bytes);

/* 1 if host[0, len) is a loopback name: localhost, 127.0.0.0/8, ::1
 * (bare or in brackets) */
int		 config_host_loopback(const char *host, size_t len);

#endif /* VMCPD_CONFIG_VALUE_H */
