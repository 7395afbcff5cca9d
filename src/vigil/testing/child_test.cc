#include "vigil/testing/child.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::testing {
namespace {

ChildOptions Shell(const std::string& script) {
  ChildOptions o;
  o.argv = {"/bin/sh", "-c", script};
  return o;
}

TEST(ChildTest, CapturesOutputAndExitCodeWithItsEnvironment) {
  ChildOptions o = Shell("echo \"out $CHILD_TEST\"; echo err >&2; exit 3");
  o.env = {{"CHILD_TEST", "set"}};
  o.capture = true;
  Child c(o);
  ASSERT_TRUE(c.started());
  const ChildResult r = c.Wait();
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out set\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(c.Alive());
}

TEST(ChildTest, AProgramThatIsNotThereDoesNotStart) {
  ChildOptions o;
  o.argv = {"/nonexistent/program"};
  o.capture = true;
  Child c(o);
  EXPECT_FALSE(c.started());
  EXPECT_EQ(c.Wait().exit_code, -1);
}

TEST(ChildTest, OutputGoesToTheLogAppendedOrTruncated) {
  TempDir dir;
  ChildOptions o = Shell("echo line");
  o.log = dir.File("log");
  Child(o).Wait();
  o.append_log = true;
  Child(o).Wait();
  EXPECT_EQ(*ReadFile(dir.File("log")), "line\nline\n");
  o.append_log = false;
  Child(o).Wait();
  EXPECT_EQ(*ReadFile(dir.File("log")), "line\n");
}

// A child that ignores SIGTERM is killed once its grace is over; one that does not is stopped
// by SIGTERM at once.
TEST(ChildTest, StopsWithSigtermThenSigkill) {
  ChildOptions stubborn = Shell("trap '' TERM; while :; do sleep 0.05; done");
  stubborn.grace = std::chrono::milliseconds(200);
  stubborn.own_group = true;  // the loop's sleep is stopped with it
  const auto start = std::chrono::steady_clock::now();
  {
    Child c(stubborn);
    ASSERT_TRUE(c.started());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(c.Alive());
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));

  Child polite(Shell("exec sleep 60"));
  ASSERT_TRUE(polite.Alive());
  polite.Stop();
  EXPECT_FALSE(polite.Alive());
  EXPECT_EQ(polite.Wait().exit_code, -1);  // killed by SIGTERM
}

}  // namespace
}  // namespace vigil::testing
