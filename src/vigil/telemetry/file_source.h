// Telemetry files as one stream of points in time order, read in bounded memory
// (docs/detect.md, "Reading files").
//
// Each file is read twice, a piece of whole lines at a time (LineChunkReader). The first pass
// checks every line (a malformed one stops it with the message that names file, line and field)
// and measures the file's disorder: how far a sample lies before the latest one ahead of it (0 for
// a file in time order, a scrape interval for staggered scrapes, the whole span for a file sorted
// by series). The second pass normalises the samples in file order and holds each file's points in
// a reorder buffer until no later line can come before them, which takes the points of `disorder`
// seconds: a file in time order or nearly costs a piece and a few seconds of points, a file sorted
// by series costs all its points, as reading it whole did. The files are merged by time, each one
// opened when the merge reaches its first sample. The order is exactly that of a stable sort of
// every file's points by time (equal times in file order, then in the order the files were given).
//
// A file that cannot be read twice (a pipe, /dev/stdin) is not measured: it is read whole and
// its points are held until its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/telemetry/readers.h"
#include "vigil/telemetry/series.h"
#include "vigil/telemetry/source.h"

namespace vigil::telemetry {

struct FileSourceOptions {
  std::vector<std::string> paths;  // read in this order, merged by time
  std::string format = "auto";     // csv, jsonl or prom; auto: by each file's name (FormatOf)
  bool lenient = false;            // skip and count malformed lines instead of failing
  // How much is read at once, shared by the files: each reads a piece of chunk_bytes / files, at
  // least kMinPieceBytes (or chunk_bytes, when smaller), more for a longer line. Files merged by
  // time are read side by side (one per machine, all of them), each holding its piece's points.
  size_t chunk_bytes = 1 << 20;
  static constexpr size_t kMinPieceBytes = 64 << 10;
};

// The format of `path`: `format` (csv, jsonl or prom) unless it is "auto", else told by the
// extension: .csv; .jsonl or .json; .prom, .txt or .metrics. InvalidArgument naming the file
// when the name does not tell, or naming the format when it is none of those.
Result<TelemetryFormat> FormatOf(const std::string& path, std::string_view format);

class FileSource : public PointSource {
 public:
  // `names` normalises the samples and must outlive the source. Exposition samples without a
  // timestamp take their file's modification time (one saved scrape per file).
  FileSource(FileSourceOptions options, Normalizer& names);
  ~FileSource() override;

  // Both passes over every file; batches carry until = NaN. Errors: a file's format that cannot be
  // told, ReadFile's errors, and the readers' (the first malformed line, in the order the files
  // were given).
  Status Run(const BatchSink& sink) override;

  // The paths, separated by ", ".
  std::string name() const override;
  int64_t skipped() const override { return skipped_; }

  // The most points held at once in the reorder buffers during Run.
  size_t peak_buffered() const { return peak_buffered_; }

 private:
  struct Stream;
  Status Scan(Stream& stream);
  Status Fill(Stream& stream);

  FileSourceOptions o_;
  Normalizer& names_;
  size_t piece_bytes_ = 0;
  std::string piece_;  // the piece of a file being read, whichever file it is
  int64_t skipped_ = 0;
  size_t buffered_ = 0, peak_buffered_ = 0;
};

}  // namespace vigil::telemetry
