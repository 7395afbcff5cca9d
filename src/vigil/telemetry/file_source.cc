#include "vigil/telemetry/file_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <optional>
#include <queue>
#include <span>
#include <type_traits>
#include <utility>

#include "vigil/core/env.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::telemetry {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kBatchPoints = 4096;
constexpr size_t kRunBlockPoints = (64 << 10) / sizeof(Point);  // a run's read block: 64 KB
constexpr size_t kMergeFanIn = 16;  // runs of one level merged into one of the next

static_assert(std::is_trivially_copyable_v<Point>, "runs hold points as their bytes");

// Points sorted by time in a temporary file, written once, then read back a block at a time. The
// file leaves its directory as soon as it is made and lives as long as its descriptor, which the
// destructor closes: no path (an error, an early return, a crash) leaves it behind.
class SpillRun {
 public:
  // A new, empty run in `dir`. `level`: how many merges its points went through. IoError naming
  // `dir` when the file cannot be made.
  static Result<SpillRun> Create(const std::string& dir, int level) {
    std::string path = dir + "/vigil-spill.XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0) return ErrnoError(fmt::format("cannot make a spill file in {}", dir));
    if (unlink(path.c_str()) != 0) {
      Status s = ErrnoError(fmt::format("cannot remove spill file {}", path));
      close(fd);
      return s;
    }
    return SpillRun(dir, fd, level);
  }
  SpillRun(SpillRun&& other) noexcept
      : dir_(std::move(other.dir_)),
        fd_(std::exchange(other.fd_, -1)),
        level_(other.level_),
        written_(other.written_),
        read_(other.read_),
        block_(std::move(other.block_)),
        at_(other.at_) {}
  SpillRun& operator=(SpillRun&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      dir_ = std::move(other.dir_);
      fd_ = std::exchange(other.fd_, -1);
      level_ = other.level_;
      written_ = other.written_;
      read_ = other.read_;
      block_ = std::move(other.block_);
      at_ = other.at_;
    }
    return *this;
  }
  ~SpillRun() {
    if (fd_ >= 0) close(fd_);
  }

  // Writing: the points earliest first, then Finish, which reads the first block back.
  Status Push(const Point& p) {
    block_.push_back(p);
    return block_.size() == kRunBlockPoints ? Flush() : Status::Ok();
  }
  Status Finish() {
    VIGIL_RETURN_IF_ERROR(Flush());
    return Load();
  }

  // Reading, after Finish.
  bool done() const { return at_ == block_.size(); }
  // REQUIRES: !done().
  const Point& top() const { return block_[at_]; }
  Status Pop() { return ++at_ < block_.size() ? Status::Ok() : Load(); }
  int level() const { return level_; }

 private:
  SpillRun(std::string dir, int fd, int level) : dir_(std::move(dir)), fd_(fd), level_(level) {}

  Status Flush() {
    const std::string_view bytes(reinterpret_cast<const char*>(block_.data()),
                                 block_.size() * sizeof(Point));
    VIGIL_RETURN_IF_ERROR(WriteAll(fd_, bytes, fmt::format("a spill file in {}", dir_)));
    written_ += block_.size();
    block_.clear();
    return Status::Ok();
  }

  // The next block, or none (its memory freed) at the end.
  Status Load() {
    const size_t n = std::min(written_ - read_, kRunBlockPoints);
    at_ = 0;
    if (n == 0) {
      std::vector<Point>().swap(block_);
      return Status::Ok();
    }
    block_.resize(n);
    char* data = reinterpret_cast<char*>(block_.data());
    const size_t bytes = n * sizeof(Point);
    for (size_t got = 0; got < bytes;) {
      const ssize_t r =
          pread(fd_, data + got, bytes - got, static_cast<off_t>(read_ * sizeof(Point) + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return ErrnoError(fmt::format("cannot read a spill file in {}", dir_));
      if (r == 0) return Status::IoError(fmt::format("a spill file in {} ended early", dir_));
      got += static_cast<size_t>(r);
    }
    read_ += n;
    return Status::Ok();
  }

  std::string dir_;  // for messages
  int fd_ = -1;
  int level_ = 0;
  size_t written_ = 0;        // points in the file
  size_t read_ = 0;           // points read from it
  std::vector<Point> block_;  // being written; or read, from at_
  size_t at_ = 0;
};

// The run whose next point is the earliest (equal times: the first of them); runs.size() when
// every run is done.
size_t Earliest(std::span<const SpillRun> runs) {
  size_t best = runs.size();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].done() && (best == runs.size() || runs[i].top().time < runs[best].top().time)) {
      best = i;
    }
  }
  return best;
}

// The points of `runs` in a new run at `level`: earliest first, equal times in the order of `runs`.
Result<SpillRun> MergeRuns(std::span<SpillRun> runs, const std::string& dir, int level) {
  VIGIL_ASSIGN_OR_RETURN(SpillRun merged, SpillRun::Create(dir, level));
  for (size_t i = Earliest(runs); i < runs.size(); i = Earliest(runs)) {
    VIGIL_RETURN_IF_ERROR(merged.Push(runs[i].top()));
    VIGIL_RETURN_IF_ERROR(runs[i].Pop());
  }
  VIGIL_RETURN_IF_ERROR(merged.Finish());
  return merged;
}

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
  // The points held, released or waiting.
  size_t size() const { return entries_.size() - taken_; }

  // Writes the points held to `run`, earliest first, equal times in the order they arrived, and
  // empties the buffer. Its memory is kept for the points still to be read (growing it again
  // would hold the old and the new block at once), or freed (`free`) when none are.
  Status MoveTo(SpillRun& run, bool free) {
    const auto first = entries_.begin() + static_cast<ptrdiff_t>(taken_);
    if (!std::is_sorted(first, entries_.end(), Earlier)) std::sort(first, entries_.end(), Earlier);
    for (auto it = first; it != entries_.end(); ++it) VIGIL_RETURN_IF_ERROR(run.Push(it->point));
    entries_.clear();
    if (free) entries_.shrink_to_fit();
    taken_ = released_ = left_waiting_ = 0;
    waiting_from_ = kInf;
    return Status::Ok();
  }

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
  // Once spilled, what the buffer held went to runs, earliest written first, and the file is read
  // to its end before it gives another point (only its end releases every point of its runs; the
  // next one when it spilled, if any, was released already). Spilling again adds a run.
  bool spilled = false;
  std::vector<SpillRun> runs;

  // Where the next point is: runs[i], or the buffer (i == runs.size()); runs.size() + 1 when no
  // point is ready. Equal times: the run written first, the buffer (read last) after the runs.
  size_t Next() const {
    const size_t run = Earliest(runs);
    if (buffer.ready() && (run == runs.size() || buffer.top().time < runs[run].top().time)) {
      return runs.size();
    }
    return run < runs.size() ? run : runs.size() + 1;
  }
  bool ready() const { return Next() <= runs.size(); }
  // REQUIRES: ready().
  const Point& top() const {
    const size_t next = Next();
    return next == runs.size() ? buffer.top() : runs[next].top();
  }
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

// Reads pieces of the file until its earliest point held can go, or to its end (a spilled file).
Status FileSource::Fill(Stream& s, std::vector<Stream>& streams) {
  if (!s.done && !s.reader) {
    VIGIL_ASSIGN_OR_RETURN(s.chunks, LineChunkReader::Open(s.read.source, piece_bytes_));
    s.reader.emplace(s.format, s.read);
  }
  Point p;
  Status spill;
  const SampleSink hold = [&](const RawSample& r) {
    s.latest = std::max(s.latest, r.time);
    if (!spill.ok() || !names_.Normalize(r, &p)) return;
    if (buffered_ == o_.max_buffered_points) {  // full: the file that holds the most spills
      spill = Spill(*std::max_element(
          streams.begin(), streams.end(),
          [](const Stream& a, const Stream& b) { return a.buffer.size() < b.buffer.size(); }));
      if (!spill.ok()) return;
    }
    s.buffer.Push(p);
    peak_buffered_ = std::max(peak_buffered_, ++buffered_);
  };
  while (!s.done && (s.spilled || !s.buffer.ready())) {
    VIGIL_ASSIGN_OR_RETURN(const std::string_view piece, s.chunks->Next(&piece_));
    if (piece.empty()) {
      VIGIL_RETURN_IF_ERROR(s.reader->Finish());
      s.chunks.reset();
      s.reader.reset();
      s.done = true;
      s.buffer.Release(kInf);
    } else {
      VIGIL_RETURN_IF_ERROR(s.reader->Read(piece, hold));
      VIGIL_RETURN_IF_ERROR(spill);
      // No line still unread lies before this: later ones are at most `disorder` behind.
      if (!s.spilled) s.buffer.Release(s.latest - s.disorder);
    }
  }
  return Status::Ok();
}

// Writes the points `s` holds to a new run, then merges its newest runs while kMergeFanIn of them
// have one level: a file keeps fewer than kMergeFanIn runs of each level, each with its block.
Status FileSource::Spill(Stream& s) {
  VIGIL_ASSIGN_OR_RETURN(SpillRun run, SpillRun::Create(spill_dir_, 0));
  const size_t held = s.buffer.size();
  VIGIL_RETURN_IF_ERROR(s.buffer.MoveTo(run, /*free=*/s.done));
  VIGIL_RETURN_IF_ERROR(run.Finish());
  buffered_ -= held;
  spilled_points_ += held;
  s.spilled = true;
  s.runs.push_back(std::move(run));
  while (s.runs.size() >= kMergeFanIn) {
    const auto newest = s.runs.end() - static_cast<ptrdiff_t>(kMergeFanIn);
    const int level = s.runs.back().level();
    if (newest->level() != level) break;  // levels only fall towards the newest
    VIGIL_ASSIGN_OR_RETURN(SpillRun merged,
                           MergeRuns(std::span(newest, s.runs.end()), spill_dir_, level + 1));
    s.runs.erase(newest, s.runs.end());
    s.runs.push_back(std::move(merged));
  }
  return Status::Ok();
}

// Takes the stream's next point. REQUIRES: s.ready().
Result<Point> FileSource::Pop(Stream& s) {
  const size_t next = s.Next();
  if (next == s.runs.size()) {
    --buffered_;
    return s.buffer.Pop();
  }
  SpillRun& run = s.runs[next];
  const Point p = run.top();
  VIGIL_RETURN_IF_ERROR(run.Pop());
  if (run.done()) s.runs.erase(s.runs.begin() + static_cast<ptrdiff_t>(next));  // its file goes
  return p;
}

Status FileSource::Run(const BatchSink& sink) {
  if (o_.max_buffered_points == 0) {
    return Status::InvalidArgument("max_buffered_points must be at least 1");
  }
  spill_dir_ = o_.spill_directory.empty() ? Env::Default().TempDirectory() : o_.spill_directory;
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
    VIGIL_RETURN_IF_ERROR(Fill(s, streams));
    if (s.ready()) heads.emplace(s.top().time, s.index);
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
    VIGIL_ASSIGN_OR_RETURN(const Point p, Pop(s));
    batch.push_back(p);
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
