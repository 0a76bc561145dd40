/*
 * The version vmcpd reports: serverInfo, clientInfo to backends, the
 * start-up log line and /status.
 */
#ifndef VMCPD_VERSION_H
#define VMCPD_VERSION_H

#define VMCPD_VERSION	"0.1.0"

#endif
