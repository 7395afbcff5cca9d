// Test support: a raw TCP connection to a server on loopback, to send what no well-behaved HTTP
// client would (half a request head, a body that never ends) and read what comes back.
#pragma once

#include <string>
#include <string_view>

namespace vigil::testing {

class RawConnection {
 public:
  explicit RawConnection(int port);  // 127.0.0.1:port
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Sends all of `data`; false once the server closed or reset the connection.
  bool Send(std::string_view data);
  // Everything received until the server closes the connection or `timeout_s` passes.
  std::string ReadUntilClosed(double timeout_s);
  // Whether the server closed the connection during a read.
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

}  // namespace vigil::testing
