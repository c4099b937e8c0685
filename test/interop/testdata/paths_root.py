# Sends requests whose paths end in "/" or "/." (and a few more about
# names) with XRootD's Python bindings, each on a fresh fixture: a file f
# holding "hello" and a directory d (mode 0750, xrdfs's default). Prints
# {request: [error code (0: ok), what the namespace holds afterwards]}.
# Usage: paths_root.py HOST PREFIX [request ...]
import json, sys
from XRootD import client
from XRootD.client.flags import OpenFlags, QueryCode, AccessMode, MkDirFlags

host, prefix = sys.argv[1], sys.argv[2]
only = sys.argv[3:]
url = "root://" + host + "/"
fs = client.FileSystem("root://" + host)
P = lambda p: prefix + "/" + p
D750 = AccessMode.UR | AccessMode.UW | AccessMode.UX | AccessMode.GR | AccessMode.GX
D755 = D750 | AccessMode.OR | AccessMode.OX
# Other permissions than D750 for the owner or group (a box gives others
# nothing whatever is asked, so D755 makes the same directory as D750 there).
D700 = AccessMode.UR | AccessMode.UW | AccessMode.UX
LONG = "x" * 256

def reset():
    for n in ["f", "g", "nx", "d2", LONG]:
        fs.rm(P(n))
    for n in ["d", "d2", "g", "nx", LONG]:
        fs.rmdir(P(n))
    f = client.File()
    f.open(url + P("f"), OpenFlags.DELETE)
    f.write(b"hello", 0)
    f.close()
    fs.mkdir(P("d"), MkDirFlags.NONE, D750)

def state():
    out = []
    for n in ["f", "d", "g", "d2", "nx"]:
        st, info = fs.stat(P(n))
        if st.ok:
            out.append(n + ("/" if info.flags & 2 else ":%d" % info.size))
    return " ".join(out)

def code(st):
    return 0 if st.ok else st.errno

def open_(path, flags):
    f = client.File()
    st, _ = f.open(url + P(path), flags)
    if st.ok:
        f.close()
    return st

def attrs(reply):
    # xrootd answers a path error per attribute; take the first.
    st, per = reply
    if st.ok:
        for item in per or []:
            s = item[-1]
            if not s["ok"]:
                class E: ok = False; errno = s["errno"]
                return E
    return st

requests = {
    "open read f/": lambda: open_("f/", OpenFlags.READ),
    "open read f/.": lambda: open_("f/.", OpenFlags.READ),
    "open read d/": lambda: open_("d/", OpenFlags.READ),
    "open read nx/": lambda: open_("nx/", OpenFlags.READ),
    "open update f/": lambda: open_("f/", OpenFlags.UPDATE),
    "open delete f/": lambda: open_("f/", OpenFlags.DELETE),
    "open delete f/.": lambda: open_("f/.", OpenFlags.DELETE),
    "open delete d/": lambda: open_("d/", OpenFlags.DELETE),
    "open delete nx/": lambda: open_("nx/", OpenFlags.DELETE),
    "open new nx/": lambda: open_("nx/", OpenFlags.NEW),
    "stat f/": lambda: fs.stat(P("f/"))[0],
    "stat f/.": lambda: fs.stat(P("f/."))[0],
    "stat d/": lambda: fs.stat(P("d/"))[0],
    "stat d/.": lambda: fs.stat(P("d/."))[0],
    "stat nx/": lambda: fs.stat(P("nx/"))[0],
    "rm f/": lambda: fs.rm(P("f/"))[0],
    "rm f/.": lambda: fs.rm(P("f/."))[0],
    "rm d/": lambda: fs.rm(P("d/"))[0],
    "rm d/.": lambda: fs.rm(P("d/."))[0],
    "rm nx/": lambda: fs.rm(P("nx/"))[0],
    "rmdir d/.": lambda: fs.rmdir(P("d/."))[0],
    "rmdir d/": lambda: fs.rmdir(P("d/"))[0],
    "rmdir f/": lambda: fs.rmdir(P("f/"))[0],
    "mv f/ g": lambda: fs.mv(P("f/"), P("g"))[0],
    "mv f/. g": lambda: fs.mv(P("f/."), P("g"))[0],
    "mv f g/": lambda: fs.mv(P("f"), P("g/"))[0],
    "mv f d/": lambda: fs.mv(P("f"), P("d/"))[0],
    "mv d/ d2": lambda: fs.mv(P("d/"), P("d2"))[0],
    "mv d d2/": lambda: fs.mv(P("d"), P("d2/"))[0],
    "mv d/. d2": lambda: fs.mv(P("d/."), P("d2"))[0],
    "mv f f": lambda: fs.mv(P("f"), P("f"))[0],
    "mv d d": lambda: fs.mv(P("d"), P("d"))[0],
    "mkdir f/": lambda: fs.mkdir(P("f/"), MkDirFlags.NONE, D750)[0],
    "mkdir nx/": lambda: fs.mkdir(P("nx/"), MkDirFlags.NONE, D750)[0],
    "mkdir nx/.": lambda: fs.mkdir(P("nx/."), MkDirFlags.NONE, D750)[0],
    "mkdir d again": lambda: fs.mkdir(P("d"), MkDirFlags.NONE, D750)[0],
    "mkdir d/ again": lambda: fs.mkdir(P("d/"), MkDirFlags.NONE, D750)[0],
    "mkdir d other mode": lambda: fs.mkdir(P("d"), MkDirFlags.NONE, D700)[0],
    "mkdir -p d other mode": lambda: fs.mkdir(P("d"), MkDirFlags.MAKEPATH, D755)[0],
    "truncate f/": lambda: fs.truncate(P("f/"), 1)[0],
    "truncate d/": lambda: fs.truncate(P("d/"), 1)[0],
    "chmod f/": lambda: fs.chmod(P("f/"), AccessMode.UR | AccessMode.UW)[0],
    "chmod d/": lambda: fs.chmod(P("d/"), D750)[0],
    "checksum f/": lambda: fs.query(QueryCode.CHECKSUM, P("f/"))[0],
    "locate f/": lambda: fs.locate(P("f/"), OpenFlags.NONE)[0],
    "locate d/": lambda: fs.locate(P("d/"), OpenFlags.NONE)[0],
    "dirlist f/": lambda: fs.dirlist(P("f/"))[0],
    "dirlist d/": lambda: fs.dirlist(P("d/"))[0],
    "dirlist d/.": lambda: fs.dirlist(P("d/."))[0],
    "xattr set f/": lambda: attrs(fs.set_xattr(P("f/"), [("k", "v")])),
    "xattr get f/": lambda: attrs(fs.get_xattr(P("f/"), ["k"])),
    "xattr list f/": lambda: fs.list_xattr(P("f/"))[0],
    "statvfs f/": lambda: fs.statvfs(P("f/"))[0],
    "stat 256-byte name": lambda: fs.stat(P(LONG))[0],
    "open new 256-byte name": lambda: open_(LONG, OpenFlags.NEW),
    "mkdir 256-byte name": lambda: fs.mkdir(P(LONG), MkDirFlags.NONE, D750)[0],
    "mv to 256-byte name": lambda: fs.mv(P("f"), P(LONG))[0],
    "stat 4097-byte path": lambda: fs.stat(P(("y" * 200 + "/") * 20 + "z" * (4097 - 20 * 201 - len(P("")))))[0],
}

out = {}
for name, request in requests.items():
    if only and name not in only:
        continue
    reset()
    out[name] = [code(request()), state()]
print(json.dumps(out))
