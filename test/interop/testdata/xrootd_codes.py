import json, sys
from XRootD import client
from XRootD.client.flags import OpenFlags
host, prefix, ro = sys.argv[1], sys.argv[2], sys.argv[3]
base = "root://" + host + "/"
fs = client.FileSystem("root://" + host)
out = {}
def rec(name, st):
    out[name] = [st.errno, st.message.strip()[-70:]]
f = client.File(); st, _ = f.open(base + ro + "/new", OpenFlags.NEW); rec("readonly_create", st)
st, _ = fs.mkdir(ro + "/d"); rec("readonly_mkdir", st)
st, _ = fs.stat(prefix + "/../etc/passwd"); rec("dotdot_stat", st)
f = client.File(); st, _ = f.open(base + prefix + "/r", OpenFlags.DELETE); f.write(b"0123456789", 0); f.close()
f = client.File(); st, _ = f.open(base + prefix + "/r", OpenFlags.READ)
st, _ = f.write(b"x", 0); rec("write_read_handle", st)
st, _ = f.vector_read([(5, 10)]); rec("readv_past_eof", st)
st, _ = f.vector_read([(50, 10)]); rec("readv_beyond_eof", st)
st, _ = f.truncate(2); rec("truncate_read_handle", st)
f.close()
st, _ = fs.stat(prefix + "/nope"); rec("stat_missing", st)
st, _ = fs.rm(prefix + "/nope"); rec("rm_missing", st)
st, _ = fs.rmdir(prefix + "/nope"); rec("rmdir_missing", st)
st, _ = fs.mkdir(prefix + "/r"); rec("mkdir_over_file", st)
st, _ = fs.dirlist(prefix + "/r"); rec("dirlist_file", st)
st, _ = fs.dirlist("/"); rec("dirlist_root", st)
f = client.File(); st, _ = f.open(base + prefix + "/r", OpenFlags.NEW); rec("create_existing", st)
f = client.File(); st, _ = f.open(base + prefix + "/nope", OpenFlags.READ); rec("open_missing", st)
f = client.File(); st, _ = f.open(base + prefix + "/", OpenFlags.READ); rec("open_dir", st)
st, _ = fs.mv(prefix + "/nope", prefix + "/x"); rec("mv_missing", st)
st, _ = fs.query(client.flags.QueryCode.CHECKSUM, prefix + "/nope"); rec("cksum_missing", st)
print(json.dumps(out))
