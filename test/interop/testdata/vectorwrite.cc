// vectorwrite calls XrdCl::File::VectorWrite, the XRootD client's
// kXR_writev, which neither xrdcp nor the Python bindings expose. It
// prints one line: "ok" or "error <kXR code> <message>".
//
//   vectorwrite URL write     segments "hello " at 0, "world" at 6, "far" at 20
//   vectorwrite URL many N    N one-byte segments, "a".."z" repeated, at 0..N-1
//   vectorwrite URL big N     one segment of N bytes "x" at 0
//   vectorwrite URL readonly  the file opened for reading, one segment
#include <XrdCl/XrdClFile.hh>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static int report(const XrdCl::XRootDStatus &st) {
  if (st.IsOK()) {
    std::printf("ok\n");
    return 0;
  }
  std::printf("error %u %s\n", st.errNo, st.GetErrorMessage().c_str());
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: vectorwrite URL write|many N|big N|readonly\n");
    return 2;
  }
  std::string url = argv[1], mode = argv[2];
  long n = argc > 3 ? std::atol(argv[3]) : 0;
  XrdCl::File f;
  XrdCl::OpenFlags::Flags flags = XrdCl::OpenFlags::Delete | XrdCl::OpenFlags::Update | XrdCl::OpenFlags::MakePath;
  if (mode == "readonly") flags = XrdCl::OpenFlags::Read;
  XrdCl::XRootDStatus st = f.Open(url, flags, XrdCl::Access::UR | XrdCl::Access::UW);
  if (!st.IsOK()) {
    std::printf("open failed: %s\n", st.ToStr().c_str());
    return 1;
  }
  std::vector<std::string> data;
  XrdCl::ChunkList chunks;
  auto add = [&](uint64_t off, std::string s) {
    data.push_back(s);
    chunks.push_back(XrdCl::ChunkInfo(off, 0, nullptr));
  };
  if (mode == "write") {
    add(0, "hello ");
    add(6, "world");
    add(20, "far");
  } else if (mode == "many") {
    for (long i = 0; i < n; i++) add(i, std::string(1, char('a' + i % 26)));
  } else if (mode == "big") {
    add(0, std::string(n, 'x'));
  } else {
    add(0, "y");
  }
  data.shrink_to_fit(); // data no longer moves: point the chunks at it
  for (size_t i = 0; i < chunks.size(); i++) {
    chunks[i].length = data[i].size();
    chunks[i].buffer = (void *)data[i].data();
  }
  int rc = report(f.VectorWrite(chunks));
  XrdCl::XRootDStatus cst = f.Close();
  (void)cst;
  return rc;
}
