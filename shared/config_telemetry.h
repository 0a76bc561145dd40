/*
 * vmcpd.yaml's telemetry: (config.h; parsed by config_telemetry.c):
 * OpenTelemetry traces and metrics exported over OTLP/HTTP
 * (docs: vmcpd.yaml(5), TELEMETRY; vmcpd(8), Tracing).
 */
#ifndef VMCPD_CONFIG_TELEMETRY_H
#define VMCPD_CONFIG_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

enum config_otlp_protocol {
	CONFIG_OTLP_PROTOBUF = 0,	/* protocol: http/protobuf (default) */
	CONFIG_OTLP_JSON		/* protocol: http/json */
};

/* one "Name: value" for the collector (headers:, headersFromEnv:) */
struct config_otlp_header {
	char			*oh_name;
	char			*oh_value;	/* a secret: never logged */
};

/* one resource attribute (customAttributes:) */
struct config_otlp_attr {
	char			*oa_key;
	char			*oa_value;
};

struct config_telemetry {
	/* endpoint: set, and tracingEnabled or metricsEnabled */
	int			 ct_enabled;
	/*
	 * The collector's base URL, no trailing '/': "http://h:p" or
	 * "https://h:p" for endpoint "h:p" (insecure: true gives http),
	 * or the URL as written.  Spans go to ct_url + "/v1/traces",
	 * metrics to ct_url + "/v1/metrics".  NULL: no endpoint.
	 */
	char			*ct_url;
	int			 ct_insecure;		/* insecure: */
	char			*ct_service_name;	/* default: name: */
	char			*ct_service_version;	/* default VMCPD_VERSION */
	int			 ct_tracing;		/* tracingEnabled */
	int			 ct_metrics;		/* metricsEnabled */
	double			 ct_sampling_rate;	/* 0..1, "0.05" */
	enum config_otlp_protocol ct_protocol;		/* protocol: */
	struct config_otlp_header *ct_headers;		/* headers: */
	size_t			 ct_nheaders;
	struct config_otlp_attr	*ct_attrs;		/* customAttributes: */
	size_t			 ct_nattrs;
	char			*ct_ca_file;		/* caCertPath: */
	int			 ct_baggage;		/* propagateBaggage: */
	/* the exporter's bounds (each process, its own queue) */
	unsigned int		 ct_queue_max;		/* maxQueueSize 2048 */
	unsigned int		 ct_batch_max;		/* maxExportBatchSize 512 */
	uint64_t		 ct_interval_ms;	/* exportInterval 1s */
	uint64_t		 ct_timeout_ms;		/* exportTimeout 10s */
	uint64_t		 ct_metrics_interval_ms; /* metricsInterval 60s */
};

#endif /* VMCPD_CONFIG_TELEMETRY_H */
