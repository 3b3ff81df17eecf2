"""A real OTLP/HTTP receiver: decodes ExportTraceServiceRequest and
ExportMetricsServiceRequest (protobuf, the `opentelemetry-proto` package
from PyPI) and appends what it received to OUT as JSON lines, one per span
and one per metric data point. The Rust test (tests/tests/mcp/otel.rs)
makes the assertions; this script only decodes.

Prints "listening on PORT" once it accepts connections.

usage: otlp_receiver.py OUT
"""

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

LOCK = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return attributes(any_value.kvlist_value.values)
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def spans(request):
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield {
                    "signal": "span",
                    "service": resource.get("service.name"),
                    "scope": scope_spans.scope.name,
                    "name": span.name,
                    "kind": span.kind,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "attributes": attributes(span.attributes),
                    "status": span.status.code,
                    "events": [
                        {"name": e.name, "attributes": attributes(e.attributes)}
                        for e in span.events
                    ],
                    "links": [
                        {"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()}
                        for l in span.links
                    ],
                }


def points(request):
    for resource_metrics in request.resource_metrics:
        resource = attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                data = getattr(metric, kind)
                for point in data.data_points:
                    line = {
                        "signal": "metric",
                        "service": resource.get("service.name"),
                        "name": metric.name,
                        "unit": metric.unit,
                        "type": kind,
                        "attributes": attributes(point.attributes),
                    }
                    if kind == "histogram":
                        line["count"] = point.count
                        line["sum"] = point.sum
                    yield line


class Handler(BaseHTTPRequestHandler):
    out = None

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            lines = list(spans(request))
            reply = ExportTraceServiceResponse()
        elif self.path == "/v1/metrics":
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            lines = list(points(request))
            reply = ExportMetricsServiceResponse()
        else:
            self.send_response(404)
            self.end_headers()
            return
        with LOCK, open(self.out, "a", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")
        payload = reply.SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    Handler.out = sys.argv[1]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()
