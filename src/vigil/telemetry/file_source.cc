#include "vigil/telemetry/file_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <utility>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::telemetry {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kBatchPoints = 4096;

// Points of one file waiting until no later line can come before them. Released points are
// taken earliest first, equal times in the order they arrived. One vector holds both: at its
// front the released points, sorted (a file in time order needs no sorting), then those still
// waiting, in arrival order.
class ReorderBuffer {
 public:
  void Push(const Point& p) {
    entries_.push_back({p, next_seq_++});
    waiting_from_ = std::min(waiting_from_, p.time);
  }

  // Releases the waiting points at or before `time`, all of them when it is +inf. Finding them
  // costs a pass over those waiting, so that it is done only once as many have arrived since the
  // last pass as it left waiting: a file in great disorder (sorted by series) releases little
  // before its end, and would otherwise pay a pass per piece.
  void Release(double time) {
    const size_t waiting = entries_.size() - released_;
    if (time < waiting_from_ || (time != kInf && waiting < 2 * left_waiting_)) return;
    if (2 * taken_ >= entries_.size()) {  // drop what was taken: amortised, a move per point
      entries_.erase(entries_.begin(), entries_.begin() + static_cast<ptrdiff_t>(taken_));
      released_ -= taken_;
      taken_ = 0;
    }
    const auto first = entries_.begin() + static_cast<ptrdiff_t>(released_);
    const auto cut = std::partition(first, entries_.end(),
                                    [time](const Entry& e) { return e.point.time <= time; });
    if (!std::is_sorted(first, cut, Earlier)) std::sort(first, cut, Earlier);
    released_ = static_cast<size_t>(cut - entries_.begin());
    left_waiting_ = entries_.size() - released_;
    waiting_from_ = kInf;
    for (auto it = cut; it != entries_.end(); ++it) {
      waiting_from_ = std::min(waiting_from_, it->point.time);
    }
  }

  bool ready() const { return taken_ < released_; }
  // REQUIRES: ready().
  const Point& top() const { return entries_[taken_].point; }
  Point Pop() { return entries_[taken_++].point; }

 private:
  struct Entry {
    Point point;
    int64_t seq;  // arrival order, for equal times
  };
  static bool Earlier(const Entry& a, const Entry& b) {
    return a.point.time != b.point.time ? a.point.time < b.point.time : a.seq < b.seq;
  }

  std::vector<Entry> entries_;
  size_t taken_ = 0;            // entries_[0, taken_) were taken
  size_t released_ = 0;         // entries_[taken_, released_) are released, in order
  double waiting_from_ = kInf;  // the earliest time of entries_[released_, end)
  size_t left_waiting_ = 0;     // how many the last pass left waiting
  int64_t next_seq_ = 0;
};

}  // namespace

Result<TelemetryFormat> FormatOf(const std::string& path, std::string_view format) {
  if (format == "csv") return TelemetryFormat::kLongCsv;
  if (format == "jsonl") return TelemetryFormat::kJsonl;
  if (format == "prom") return TelemetryFormat::kExposition;
  if (format != "auto") {
    return Status::InvalidArgument(
        fmt::format("unknown telemetry format {}; csv, jsonl, prom or auto", Quote(format)));
  }
  if (path.ends_with(".csv")) return TelemetryFormat::kLongCsv;
  if (path.ends_with(".jsonl") || path.ends_with(".json")) return TelemetryFormat::kJsonl;
  if (path.ends_with(".prom") || path.ends_with(".txt") || path.ends_with(".metrics")) {
    return TelemetryFormat::kExposition;
  }
  return Status::InvalidArgument(fmt::format(
      "{}: cannot tell the format from the name; give --format csv, jsonl or prom", path));
}

struct FileSource::Stream {
  size_t index = 0;  // in the order the files were given
  ReadOptions read;  // source, lenient, a saved scrape's time
  TelemetryFormat format = TelemetryFormat::kLongCsv;
  // From the first pass: the earliest sample's time (+inf: no sample), and how far any sample
  // lies before the latest one ahead of it. A pipe is not measured: -inf and +inf.
  double first = -kInf;
  double disorder = kInf;
  // The second pass.
  std::optional<LineChunkReader> chunks;
  std::optional<TelemetryReader> reader;
  ReorderBuffer buffer;
  double latest = -kInf;  // the latest sample's time read so far
  bool done = false;      // read to the end
};

FileSource::FileSource(FileSourceOptions options, Normalizer& names)
    : o_(std::move(options)), names_(names) {}

FileSource::~FileSource() = default;

std::string FileSource::name() const { return fmt::format("{}", fmt::join(o_.paths, ", ")); }

// The first pass over one file: every line checked, its first time and disorder measured.
Status FileSource::Scan(Stream& s) {
  VIGIL_ASSIGN_OR_RETURN(LineChunkReader chunks,
                         LineChunkReader::Open(s.read.source, piece_bytes_));
  if (!chunks.regular()) return Status::Ok();  // read once, in the second pass
  ReadOptions read = s.read;
  read.skipped = nullptr;  // counted in the second pass
  TelemetryReader reader(s.format, read);
  double first = kInf, latest = -kInf, disorder = 0;
  const SampleSink measure = [&](const RawSample& r) {
    first = std::min(first, r.time);
    disorder = std::max(disorder, latest - r.time);
    latest = std::max(latest, r.time);
  };
  for (;;) {
    VIGIL_ASSIGN_OR_RETURN(const std::string_view piece, chunks.Next(&piece_));
    if (piece.empty()) break;
    VIGIL_RETURN_IF_ERROR(reader.Read(piece, measure));
  }
  VIGIL_RETURN_IF_ERROR(reader.Finish());
  s.first = first;
  s.disorder = disorder;
  return Status::Ok();
}

// Reads pieces of the file until its earliest point held can go, or to its end.
Status FileSource::Fill(Stream& s) {
  if (!s.done && !s.reader) {
    VIGIL_ASSIGN_OR_RETURN(s.chunks, LineChunkReader::Open(s.read.source, piece_bytes_));
    s.reader.emplace(s.format, s.read);
  }
  Point p;
  const SampleSink hold = [&](const RawSample& r) {
    s.latest = std::max(s.latest, r.time);
    if (!names_.Normalize(r, &p)) return;
    s.buffer.Push(p);
    peak_buffered_ = std::max(peak_buffered_, ++buffered_);
  };
  while (!s.done && !s.buffer.ready()) {
    VIGIL_ASSIGN_OR_RETURN(const std::string_view piece, s.chunks->Next(&piece_));
    if (piece.empty()) {
      VIGIL_RETURN_IF_ERROR(s.reader->Finish());
      s.chunks.reset();
      s.reader.reset();
      s.done = true;
      s.buffer.Release(kInf);
    } else {
      VIGIL_RETURN_IF_ERROR(s.reader->Read(piece, hold));
      // No line still unread lies before this: later ones are at most `disorder` behind.
      s.buffer.Release(s.latest - s.disorder);
    }
  }
  return Status::Ok();
}

Status FileSource::Run(const BatchSink& sink) {
  std::vector<Stream> streams(o_.paths.size());
  piece_bytes_ = std::max(o_.chunk_bytes / std::max<size_t>(streams.size(), 1),
                          std::min(o_.chunk_bytes, FileSourceOptions::kMinPieceBytes));
  for (size_t i = 0; i < streams.size(); ++i) {
    Stream& s = streams[i];
    s.index = i;
    s.read.source = o_.paths[i];
    s.read.lenient = o_.lenient;
    s.read.skipped = &skipped_;
    VIGIL_ASSIGN_OR_RETURN(s.format, FormatOf(o_.paths[i], o_.format));
    if (s.format == TelemetryFormat::kExposition) {
      // A saved scrape without timestamps was taken when the file was written.
      struct stat st {};
      if (stat(o_.paths[i].c_str(), &st) == 0)
        s.read.default_time = static_cast<double>(st.st_mtime);
    }
    VIGIL_RETURN_IF_ERROR(Scan(s));
  }
  // Files are opened as the merge reaches their first sample.
  std::vector<Stream*> unopened;
  for (Stream& s : streams) unopened.push_back(&s);
  std::stable_sort(unopened.begin(), unopened.end(),
                   [](const Stream* a, const Stream* b) { return a->first < b->first; });
  auto next_unopened = unopened.begin();
  // The files whose earliest point can go, earliest first (equal times: the file given first).
  using Head = std::pair<double, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  auto fill = [&](Stream& s) -> Status {
    VIGIL_RETURN_IF_ERROR(Fill(s));
    if (s.buffer.ready()) heads.emplace(s.buffer.top().time, s.index);
    return Status::Ok();
  };
  std::vector<Point> batch;
  batch.reserve(kBatchPoints);
  for (;;) {
    if (next_unopened != unopened.end() &&
        (heads.empty() || (*next_unopened)->first <= heads.top().first)) {
      VIGIL_RETURN_IF_ERROR(fill(**next_unopened++));
      continue;
    }
    if (heads.empty()) break;
    Stream& s = streams[heads.top().second];
    heads.pop();
    batch.push_back(s.buffer.Pop());
    --buffered_;
    VIGIL_RETURN_IF_ERROR(fill(s));
    if (batch.size() == kBatchPoints) {
      VIGIL_RETURN_IF_ERROR(sink(batch, std::numeric_limits<double>::quiet_NaN()));
      batch.clear();
    }
  }
  if (batch.empty()) return Status::Ok();
  return sink(batch, std::numeric_limits<double>::quiet_NaN());
}

}  // namespace vigil::telemetry
