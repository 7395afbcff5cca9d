// Telemetry files as one stream of points in time order, read in bounded memory
// (docs/detect.md, "Reading files").
//
// Each file is read twice, a piece of whole lines at a time (LineChunkReader). The first pass
// checks every line (a malformed one stops it with the message that names file, line and field)
// and measures the file's disorder: how far a sample lies before the latest one ahead of it (0 for
// a file in time order, a scrape interval for staggered scrapes, the whole span for a file sorted
// by series). The second pass normalises the samples in file order and holds each file's points in
// a reorder buffer until no later line can come before them, which takes the points of `disorder`
// seconds: a file in time order or nearly costs a piece and a few seconds of points. The files are
// merged by time, each one opened when the merge reaches its first sample. The order is exactly
// that of a stable sort of every file's points by time (equal times in file order, then in the
// order the files were given).
//
// The reorder buffers hold at most max_buffered_points together. When one more would go over,
// the file that holds the most sorts its points by time and writes them to a temporary file (a
// run), and is read to its end before it gives another point; its points then come from a merge
// of its runs and what it still holds, equal times from the run written first. So a file sorted
// by series costs max_buffered_points in memory and its points once on disk, whatever its size.
// A spilled file is read sooner than it would be held, which, as another chunk_bytes does, moves
// only the order in which the normaliser first meets names (ids) and, for a series with samples
// of the same times in two files, which of them it takes.
//
// A file that cannot be read twice (a pipe, /dev/stdin) is not measured: it is read whole and
// its points are held until its end (spilled as above).
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
  // The most points the files' reorder buffers hold together, at least 1. A point held costs 48
  // bytes: a million, 48 MB, in a block of 2^20 that leaves room for points already given but not
  // yet dropped from it. Beyond the bound, points go to runs in spill_directory, 40 bytes each on
  // disk, read back 64 KB at a time; whenever 16 of a file's runs have been through as many
  // merges (a level), they are merged into one, so that a file keeps at most 15 runs a level.
  size_t max_buffered_points = 1'000'000;
  // Where runs are written; "": $TMPDIR, else /tmp. A run's file is removed from the directory
  // as soon as it is made and lives as long as it is open: none is left behind, whatever happens.
  std::string spill_directory;
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

  // Both passes over every file; batches carry until = NaN. Errors: InvalidArgument for
  // max_buffered_points 0 and a file's format that cannot be told, ReadFile's errors, the readers'
  // (the first malformed line, in the order the files were given), and IoError naming the spill
  // directory when a run cannot be made, written (a full disk) or read back.
  Status Run(const BatchSink& sink) override;

  // The paths, separated by ", ".
  std::string name() const override;
  int64_t skipped() const override { return skipped_; }

  // The most points held in memory at once in the reorder buffers during Run: at most
  // max_buffered_points (the runs' read blocks, 64 KB each, are not counted).
  size_t peak_buffered() const { return peak_buffered_; }
  // Points written to runs during Run (a merge of runs rewrites them, not counted again).
  size_t spilled_points() const { return spilled_points_; }

 private:
  struct Stream;
  Status Scan(Stream& stream);
  Status Fill(Stream& stream, std::vector<Stream>& streams);
  Status Spill(Stream& stream);
  Result<Point> Pop(Stream& stream);

  FileSourceOptions o_;
  Normalizer& names_;
  size_t piece_bytes_ = 0;
  std::string piece_;  // the piece of a file being read, whichever file it is
  int64_t skipped_ = 0;
  size_t buffered_ = 0, peak_buffered_ = 0, spilled_points_ = 0;
  std::string spill_dir_;  // spill_directory, or where "" leads
};

}  // namespace vigil::telemetry
