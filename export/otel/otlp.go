package otel

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// serviceName is the service.name of OTLP's resource unless the environment
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) names another.
const serviceName = "rath"

// tracesPath is the OTLP/HTTP path for traces.
const tracesPath = "/v1/traces"

// OTLP returns a tracer provider that batches spans and exports them as
// OTLP/HTTP protobuf to endpoint, the base URL of a collector such as
// "http://localhost:4318" ("/v1/traces" is appended unless the URL already
// ends with it; a URL without a scheme is taken as http). Shutdown flushes
// the spans still batched and stops the provider.
func OTLP(ctx context.Context, endpoint string) (*sdktrace.TracerProvider, error) {
	u, err := tracesURL(endpoint)
	if err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
	if err != nil {
		return nil, fmt.Errorf("otel otlp: exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", serviceName)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("otel otlp: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// tracesURL returns the traces URL of the collector at endpoint.
func tracesURL(endpoint string) (string, error) {
	if endpoint == "" {
		return "", errors.New("otel otlp: no endpoint")
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("otel otlp: endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("otel otlp: endpoint %q: scheme must be http or https", endpoint)
	}
	if u.Host == "" {
		return "", fmt.Errorf("otel otlp: endpoint %q names no host", endpoint)
	}
	if !strings.HasSuffix(u.Path, tracesPath) {
		u.Path = strings.TrimSuffix(u.Path, "/") + tracesPath
	}
	return u.String(), nil
}
