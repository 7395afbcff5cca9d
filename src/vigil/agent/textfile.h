// What `vigil run --textfile DIR` leaves for node-exporter's textfile collector
// (--collector.textfile.directory): DIR/vigil.prom, in Prometheus' text exposition format, with
// the run's verdict and key figures, so that a node's own checks reach Prometheus and Grafana
// between validations (docs/prometheus.md, "The node's own runs").
//
// Series, each labelled node and suite (cardinality bounded: a few series per run, plus at most
// kMaxTextfileFigures figures):
//   vigil_node_verdict{verdict="healthy"|"defective"}  1 on the run's verdict, 0 on the other
//   vigil_run_end_time_seconds                        when the run ended (Unix seconds)
//   vigil_run_findings{severity}                      failing findings, 0 included
//   vigil_run_benchmarks{status="ok"|"failed"|"skipped"}
//   vigil_run_figure{benchmark,component,metric,index,unit}  each figure of a benchmark that ran
//   vigil_run_figures_left_out                        figures not written (links, beyond the cap)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "vigil/agent/node_agent.h"
#include "vigil/core/status.h"

namespace vigil::agent {

// The file's name in DIR: the collector reads only files ending in .prom, so AtomicFile's
// temporary file beside it (vigil.prom.tmp.XXXXXX) is never read half-written.
inline constexpr std::string_view kTextfileName = "vigil.prom";

// At most this many vigil_run_figure series: a full suite on an 8-GPU node has a few hundred
// per-GPU figures, and the file is read on every scrape of every node.
inline constexpr size_t kMaxTextfileFigures = 200;

// The exposition text of a finished run: its verdict is defective when the run fails (exit 1: a
// benchmark failed, a finding or the fleet service found a fault), else healthy. Figures are those
// of the benchmarks that ran ok, in the document's order, NaN (missing) values left out. A link's
// figures ("gpu-copy/p2p:0-3", one per pair of GPUs) and every figure past kMaxTextfileFigures are
// not written but counted. Pure: the end time is the document's.
std::string FormatTextfile(const NodeAgentResult& run);

// DIR/vigil.prom, the path --textfile DIR writes.
std::string TextfilePath(const std::string& dir);

// Checks, before anything runs, that --textfile DIR is a directory in which vigil.prom can be
// written. InvalidArgument naming --textfile and DIR if not.
Status CheckTextfileDir(const std::string& dir);

// Writes `text` to DIR/vigil.prom atomically (a temporary file in DIR, renamed over it): the
// collector sees the previous run's file or this one's, never a part. IoError naming the file.
Status WriteTextfile(const std::string& dir, std::string_view text);

}  // namespace vigil::agent
