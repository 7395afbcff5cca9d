#include "vigil/core/file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

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

}  // namespace
}  // namespace vigil
