#include "vigil/core/file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "vigil/testing/fifo.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

class FileTest : public ::testing::Test {
 protected:
  size_t EntryCount() const { return tmp_.EntryCount(); }
  vigil::testing::TempDir tmp_;
  const std::string dir_ = tmp_.path();
};

TEST_F(FileTest, WriteThenRead) {
  const std::string p = dir_ + "/a.json";
  ASSERT_TRUE(WriteFileAtomic(p, "hello").ok());
  ASSERT_TRUE(WriteFileAtomic(p, "replaced").ok());
  EXPECT_EQ(*ReadFile(p), "replaced");
  EXPECT_EQ(EntryCount(), 1u);  // no temporary file left behind
}

TEST_F(FileTest, ReadTrimmedGivesASysfsValueOrNothing) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/state", "4: ACTIVE\n").ok());
  EXPECT_EQ(ReadTrimmed(dir_ + "/state"), "4: ACTIVE");
  EXPECT_EQ(ReadTrimmed(dir_ + "/missing"), "");
  EXPECT_EQ(ReadTrimmed(dir_), "");  // a directory
}

TEST_F(FileTest, MissingFileIsNotFound) {
  Result<std::string> r = ReadFile(dir_ + "/nope");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("nope"), std::string::npos);
}

TEST_F(FileTest, WriteIntoMissingDirectoryFailsAndLeavesNothing) {
  Status s = WriteFileAtomic(dir_ + "/missing/a.json", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(EntryCount(), 0u);
}

TEST_F(FileTest, CheckWritable) {
  EXPECT_TRUE(CheckWritable(dir_ + "/out.json").ok());
  EXPECT_EQ(EntryCount(), 0u);  // the probe is removed
  EXPECT_EQ(CheckWritable(dir_).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckWritable(dir_ + "/no/such/dir/out.json").code(), StatusCode::kInvalidArgument);
  if (geteuid() != 0) {  // root writes anywhere
    ASSERT_EQ(chmod(dir_.c_str(), 0500), 0);
    EXPECT_EQ(CheckWritable(dir_ + "/out.json").code(), StatusCode::kInvalidArgument);
    chmod(dir_.c_str(), 0700);
  }
}

TEST_F(FileTest, AppendAddsLines) {
  const std::string p = dir_ + "/fleet.jsonl";
  ASSERT_TRUE(AppendToFile(p, "a\n").ok());
  ASSERT_TRUE(AppendToFile(p, "b\n").ok());
  EXPECT_EQ(*ReadFile(p), "a\nb\n");
}

TEST_F(FileTest, ReadingADirectoryIsBadInput) {
  Result<std::string> r = ReadFile(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), dir_ + " is a directory, not a file");
}

// The text, then `padding` zero bytes readable past its end.
void ExpectPadded(const PaddedFile& f, std::string_view text, size_t padding) {
  EXPECT_EQ(f.text(), text);
  for (size_t i = 0; i < padding; ++i) ASSERT_EQ(f.text().data()[text.size() + i], 0) << i;
}

TEST_F(FileTest, PaddedFileIsTheTextThenZeros) {
  const std::string p = dir_ + "/fleet.jsonl";
  ASSERT_TRUE(WriteFileAtomic(p, "{\"node\": \"a\"}\n").ok());
  ExpectPadded(*PaddedFile::Read(p, 64), "{\"node\": \"a\"}\n", 64);
  ASSERT_TRUE(WriteFileAtomic(p, "").ok());
  ExpectPadded(*PaddedFile::Read(p, 64), "", 64);
  // Errors as ReadFile's.
  EXPECT_EQ(PaddedFile::Read(dir_, 64).status().message(), ReadFile(dir_).status().message());
  EXPECT_EQ(PaddedFile::Read(dir_ + "/none", 64).status().code(), StatusCode::kNotFound);
}

// A pipe has no size to map for: the memory grows as the text comes (here past its first 64 KiB).
TEST_F(FileTest, PaddedFileOfAPipeGrowsAsItIsRead) {
  const std::string p = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  std::string text;
  for (int i = 0; text.size() < 300'000; ++i) text += std::to_string(i) + "\n";
  Status written;
  std::thread writer([&] {
    written = WriteFileAtomic(p, text);
    // A writer that failed before it opened the FIFO would leave the reader blocked in its open:
    // open and close it, so that the reader sees an empty text and the test fails instead.
    if (!written.ok()) close(open(p.c_str(), O_WRONLY));
  });
  Result<PaddedFile> f = PaddedFile::Read(p, 64);
  writer.join();
  ASSERT_TRUE(written.ok()) << written.ToString();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ExpectPadded(*f, text, 64);
  const PaddedFile moved = std::move(*f);
  EXPECT_EQ(moved.text(), text);
}

// The pieces of a file, read `chunk_bytes` at a time.
std::vector<std::string> PiecesOf(const std::string& path, size_t chunk_bytes) {
  Result<LineChunkReader> reader = LineChunkReader::Open(path, chunk_bytes);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<std::string> pieces;
  std::string buffer;
  while (reader.ok()) {
    Result<std::string_view> piece = reader->Next(&buffer);
    EXPECT_TRUE(piece.ok()) << piece.status().ToString();
    if (!piece.ok() || piece->empty()) break;
    pieces.emplace_back(*piece);
  }
  return pieces;
}

TEST_F(FileTest, LineChunksEndAtLineEndsAndGrowForALongLine) {
  const std::string p = dir_ + "/t.csv";
  ASSERT_TRUE(WriteFileAtomic(p, "ab\ncd\nefghijklmn\nop\r\nq").ok());
  using Pieces = std::vector<std::string>;
  EXPECT_EQ(PiecesOf(p, 6), Pieces({"ab\ncd\n", "efghijklmn\n", "op\r\nq"}));
  EXPECT_EQ(PiecesOf(p, 1 << 20), Pieces({"ab\ncd\nefghijklmn\nop\r\nq"}));
  ASSERT_TRUE(WriteFileAtomic(p, "").ok());
  EXPECT_EQ(PiecesOf(p, 6), Pieces{});
  Result<LineChunkReader> reader = LineChunkReader::Open(p, 6);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(reader->regular());
}

TEST_F(FileTest, LineChunksOfAPipeComeWholeAndErrorsAreReadFiles) {
  const std::string p = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  std::thread writer([&] { ASSERT_TRUE(WriteFileAtomic(p, "a\nb\nc\n").ok()); });
  Result<LineChunkReader> reader = LineChunkReader::Open(p, 2);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_FALSE(reader->regular());
  std::string buffer;
  EXPECT_EQ(*reader->Next(&buffer), "a\nb\nc\n");
  EXPECT_EQ(*reader->Next(&buffer), "");
  writer.join();
  EXPECT_EQ(LineChunkReader::Open(dir_, 2).status().message(), ReadFile(dir_).status().message());
  EXPECT_EQ(LineChunkReader::Open(dir_ + "/none", 2).status().code(), StatusCode::kNotFound);
}

// Pieces appear only on Commit(); an uncommitted file leaves the old content and no debris.
TEST_F(FileTest, AtomicFileInPieces) {
  const std::string p = dir_ + "/pieces.txt";
  ASSERT_TRUE(WriteFileAtomic(p, "old\n").ok());
  {
    Result<AtomicFile> f = AtomicFile::Create(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->Append("half").ok());
  }
  EXPECT_EQ(*ReadFile(p), "old\n");
  EXPECT_EQ(EntryCount(), 1u);
  Result<AtomicFile> f = AtomicFile::Create(p);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->Append("new ").ok());
  ASSERT_TRUE(f->Append("content\n").ok());
  EXPECT_EQ(*ReadFile(p), "old\n");
  ASSERT_TRUE(f->Commit().ok());
  EXPECT_EQ(*ReadFile(p), "new content\n");
  EXPECT_EQ(EntryCount(), 1u);
  EXPECT_FALSE(f->Append("more").ok());
}

// `--out /dev/null` as root once renamed a regular file over the device node.
TEST_F(FileTest, DevNullStaysACharacterDevice) {
  ASSERT_EQ(testing::FileTypeOf("/dev/null"), S_IFCHR);
  EXPECT_TRUE(CheckWritable("/dev/null").ok());
  ASSERT_TRUE(WriteFileAtomic("/dev/null", "discarded\n").ok());
  Result<AtomicFile> f = AtomicFile::Create("/dev/null");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(f->Append("piece").ok());
  ASSERT_TRUE(f->Commit().ok());
  ASSERT_TRUE(AppendToFile("/dev/null", "line\n").ok());
  EXPECT_EQ(testing::FileTypeOf("/dev/null"), S_IFCHR);
  for (const auto& e : std::filesystem::directory_iterator("/dev")) {
    EXPECT_EQ(e.path().filename().string().rfind("null.tmp.", 0), std::string::npos) << e.path();
  }
}

TEST_F(FileTest, FifoIsWrittenInPlace) {
  const std::string p = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  EXPECT_TRUE(CheckWritable(p).ok());
  {
    testing::FifoReader reader(p);
    ASSERT_TRUE(WriteFileAtomic(p, "whole\n").ok());
    EXPECT_EQ(reader.Take(), "whole\n");
  }
  {
    testing::FifoReader reader(p);
    Result<AtomicFile> f = AtomicFile::Create(p);  // waits for the reader
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE(f->Append("one ").ok());
    ASSERT_TRUE(f->Append("two\n").ok());
    ASSERT_TRUE(f->Commit().ok());
    EXPECT_EQ(reader.Take(), "one two\n");
  }
  {
    testing::FifoReader reader(p);
    ASSERT_TRUE(AppendToFile(p, "appended\n").ok());
    EXPECT_EQ(reader.Take(), "appended\n");
  }
  EXPECT_EQ(testing::FileTypeOf(p), S_IFIFO);
  EXPECT_EQ(EntryCount(), 1u);
}

TEST_F(FileTest, SocketIsWrittenInPlace) {
  const std::string p = dir_ + "/sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (p.size() >= sizeof(addr.sun_path)) GTEST_SKIP() << "temporary path too long for a socket";
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  const int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(server, 0);
  ASSERT_EQ(bind(server, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(server, 1), 0);
  std::string got;
  std::thread reader([&] {
    const int c = accept(server, nullptr, nullptr);
    if (c < 0) return;
    char buf[256];
    ssize_t n;
    while ((n = read(c, buf, sizeof(buf))) > 0) got.append(buf, static_cast<size_t>(n));
    close(c);
  });
  EXPECT_TRUE(CheckWritable(p).ok());
  const Status s = WriteFileAtomic(p, "over a socket\n");
  reader.join();
  close(server);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got, "over a socket\n");
  EXPECT_EQ(testing::FileTypeOf(p), S_IFSOCK);
}

// A link to a file: the target is replaced atomically, and the link stays a link.
TEST_F(FileTest, SymlinkKeepsTheLinkAndReplacesItsTarget) {
  ASSERT_EQ(mkdir((dir_ + "/real").c_str(), 0700), 0);
  const std::string target = dir_ + "/real/out.json";
  ASSERT_TRUE(WriteFileAtomic(target, "old").ok());
  const std::string link = dir_ + "/link.json";
  ASSERT_EQ(symlink("real/out.json", link.c_str()), 0);  // relative to the link's directory
  const std::string chain = dir_ + "/chain.json";
  ASSERT_EQ(symlink(link.c_str(), chain.c_str()), 0);  // absolute, to another link
  EXPECT_TRUE(CheckWritable(chain).ok());
  ASSERT_TRUE(WriteFileAtomic(chain, "new").ok());
  EXPECT_EQ(testing::FileTypeOf(link), S_IFLNK);
  EXPECT_EQ(testing::FileTypeOf(chain), S_IFLNK);
  EXPECT_EQ(testing::FileTypeOf(target), S_IFREG);
  EXPECT_EQ(*ReadFile(target), "new");
  EXPECT_EQ(tmp_.EntryCount(), 3u);  // real/, link.json, chain.json: no temporary file left
  size_t in_real = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_ + "/real")) {
    ++in_real;
  }
  EXPECT_EQ(in_real, 1u);
}

// A link whose target does not exist yet: the target is created, the link stays.
TEST_F(FileTest, DanglingSymlinkCreatesItsTarget) {
  const std::string link = dir_ + "/link";
  ASSERT_EQ(symlink("made.txt", link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(link, "made").ok());
  EXPECT_EQ(testing::FileTypeOf(link), S_IFLNK);
  EXPECT_EQ(*ReadFile(dir_ + "/made.txt"), "made");
}

TEST_F(FileTest, SymlinkToDeviceWritesTheDevice) {
  const std::string link = dir_ + "/null";
  ASSERT_EQ(symlink("/dev/null", link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(link, "x").ok());
  EXPECT_EQ(testing::FileTypeOf(link), S_IFLNK);
  EXPECT_EQ(testing::FileTypeOf("/dev/null"), S_IFCHR);
}

TEST_F(FileTest, SymlinkLoopAndLinkToDirectoryAreRefused) {
  const std::string a = dir_ + "/a", b = dir_ + "/b";
  ASSERT_EQ(symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(symlink(a.c_str(), b.c_str()), 0);
  Status s = WriteFileAtomic(a, "x");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("too many levels of symbolic links"), std::string::npos);
  EXPECT_EQ(CheckWritable(a).code(), StatusCode::kInvalidArgument);
  const std::string d = dir_ + "/d";
  ASSERT_EQ(symlink(dir_.c_str(), d.c_str()), 0);
  EXPECT_EQ(WriteFileAtomic(d, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckWritable(d).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::FileTypeOf(d), S_IFLNK);
}

TEST(ThisProgramPathTest, IsThisTestBinary) {
  const std::string path = ThisProgramPath();
  ASSERT_EQ(path.front(), '/');
  EXPECT_TRUE(std::filesystem::equivalent(path, "/proc/self/exe"));
}

}  // namespace
}  // namespace vigil
