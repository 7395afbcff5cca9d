#include "vigil/detect/alert_delivery.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::detect {
namespace {

Alert AlertOn(const std::string& machine) {
  Alert a;
  a.machine = machine;
  a.kind = AlertKind::kRule;
  a.rule = "xid 79";
  a.onset = a.detected = 100;
  return a;
}

// A service that answers with the statuses it is given, and records what it took.
struct FakeService {
  PostAlerts AsPost() {
    return [this](std::string_view jsonl) {
      ++posts;
      Status s = answers.empty() ? Status::Ok() : answers.front();
      if (!answers.empty()) answers.erase(answers.begin());
      if (s.ok()) taken += jsonl;
      return s;
    };
  }
  std::vector<Status> answers;
  int posts = 0;
  std::string taken;
};

TEST(AlertDeliveryTest, AlertsAreKeptWhileTheServiceIsDownAndSentLater) {
  FakeClock clock;
  FakeService service;
  service.answers = {Status::Unavailable("down"), Status::Unavailable("down")};
  AlertDelivery delivery(service.AsPost(), "http://fleet", clock);
  ASSERT_TRUE(delivery.Add({AlertOn("a")}, false).ok());
  EXPECT_EQ(delivery.unsent(), 1u);
  // Not before the wait: 5 s after the first failure.
  clock.Advance(4);
  ASSERT_TRUE(delivery.Add({AlertOn("b")}, false).ok());
  EXPECT_EQ(service.posts, 1);
  clock.Advance(1);
  ASSERT_TRUE(delivery.Add({}, false).ok());  // due: tried again, fails; next wait 10 s
  EXPECT_EQ(service.posts, 2);
  clock.Advance(9);
  ASSERT_TRUE(delivery.Add({}, false).ok());
  EXPECT_EQ(service.posts, 2);
  clock.Advance(1);
  ASSERT_TRUE(delivery.Add({AlertOn("c")}, false).ok());
  EXPECT_EQ(service.posts, 3);
  EXPECT_EQ(delivery.unsent(), 0u);
  EXPECT_EQ(service.taken, DumpJson(AlertToJson(AlertOn("a"))) + "\n" +
                               DumpJson(AlertToJson(AlertOn("b"))) + "\n" +
                               DumpJson(AlertToJson(AlertOn("c"))) + "\n");
  EXPECT_TRUE(delivery.Delivered("out.jsonl").ok());
}

TEST(AlertDeliveryTest, TheLastAlertsAreTriedAtOnceAndWhatIsLeftIsNamed) {
  FakeClock clock;
  FakeService service;
  service.answers = {Status::Unavailable("down"), Status::Unavailable("still down")};
  AlertDelivery delivery(service.AsPost(), "http://fleet", clock);
  ASSERT_TRUE(delivery.Add({AlertOn("a")}, false).ok());
  ASSERT_TRUE(delivery.Add({AlertOn("b")}, true).ok());  // within the wait, but the last
  EXPECT_EQ(service.posts, 2);
  EXPECT_EQ(delivery.Delivered("out.jsonl").message(),
            "2 alerts not sent: still down; they are in out.jsonl");
  EXPECT_EQ(delivery.Delivered("").message(), "2 alerts not sent: still down");
}

TEST(AlertDeliveryTest, WaitsDoubleUpToTheirMostAndARefusalIsAnError) {
  FakeClock clock;
  FakeService service;
  service.answers.assign(20, Status::Unavailable("down"));
  AlertDelivery delivery(service.AsPost(), "http://fleet", clock);
  ASSERT_TRUE(delivery.Add({AlertOn("a")}, false).ok());
  std::vector<double> waits;
  double last = 0;
  for (int i = 0; i < 2000 && service.posts < 9; ++i) {
    const int before = service.posts;
    clock.Advance(1);
    ASSERT_TRUE(delivery.Add({}, false).ok());
    if (service.posts > before) {
      waits.push_back(clock.MonotonicSeconds() - last);
      last = clock.MonotonicSeconds();
    }
  }
  EXPECT_EQ(waits, (std::vector<double>{5, 10, 20, 40, 80, 160, 300, 300}));
  FakeService refusing;
  refusing.answers = {Status::InvalidArgument("bad token")};
  AlertDelivery refused(refusing.AsPost(), "http://fleet", clock);
  EXPECT_EQ(refused.Add({AlertOn("a")}, false).message(), "bad token");
}

}  // namespace
}  // namespace vigil::detect
