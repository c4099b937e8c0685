#!/usr/bin/env python3
"""Asks libvomsapi -- the library XRootD's VOMS plugin (libXrdVoms) calls --
which VOMS attributes of a proxy file it accepts, with full verification
(signature, vomsdir, VOMS server chain, dates, holder, targets), the way
libXrdVoms does. voms-proxy-info is no judge: when verification fails it
prints the attributes unverified.

Usage: X509_CERT_DIR=... X509_VOMS_DIR=... voms_peer.py PROXY.pem
Prints JSON: {"ok": bool, "error": str, "vos": [{"vo": str, "fqans": [str]}]}.
"""
import ctypes
import json
import sys

crypto = ctypes.CDLL("libcrypto.so.3")
voms = ctypes.CDLL("libvomsapi.so.1")

c_p = ctypes.c_void_p
crypto.BIO_new_file.restype = c_p
crypto.BIO_new_file.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
crypto.PEM_read_bio_X509.restype = c_p
crypto.PEM_read_bio_X509.argtypes = [c_p, c_p, c_p, c_p]
crypto.OPENSSL_sk_new_null.restype = c_p
crypto.OPENSSL_sk_push.argtypes = [c_p, c_p]
crypto.BIO_free.argtypes = [c_p]


class VOMSR(ctypes.Structure):
    _fields_ = [
        ("siglen", ctypes.c_int), ("signature", ctypes.c_char_p),
        ("user", ctypes.c_char_p), ("userca", ctypes.c_char_p),
        ("server", ctypes.c_char_p), ("serverca", ctypes.c_char_p),
        ("voname", ctypes.c_char_p), ("uri", ctypes.c_char_p),
        ("date1", ctypes.c_char_p), ("date2", ctypes.c_char_p),
        ("type", ctypes.c_int), ("std", c_p), ("custom", ctypes.c_char_p),
        ("datalen", ctypes.c_int), ("version", ctypes.c_int),
        ("fqan", ctypes.POINTER(ctypes.c_char_p)), ("serial", ctypes.c_char_p),
        ("ac", c_p), ("holder", c_p), ("mydata", ctypes.c_int), ("my2", c_p),
    ]


class VOMSDATAR(ctypes.Structure):
    _fields_ = [
        ("cdir", ctypes.c_char_p), ("vdir", ctypes.c_char_p),
        ("data", ctypes.POINTER(ctypes.POINTER(VOMSR))),
        ("workvo", ctypes.c_char_p), ("extra_data", ctypes.c_char_p),
        ("volen", ctypes.c_int), ("extralen", ctypes.c_int), ("real", c_p),
    ]


voms.VOMS_Init.restype = ctypes.POINTER(VOMSDATAR)
voms.VOMS_Init.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
voms.VOMS_Retrieve.argtypes = [c_p, c_p, ctypes.c_int, ctypes.POINTER(VOMSDATAR), ctypes.POINTER(ctypes.c_int)]
voms.VOMS_ErrorMessage.restype = ctypes.c_char_p
voms.VOMS_ErrorMessage.argtypes = [ctypes.POINTER(VOMSDATAR), ctypes.c_int, ctypes.c_char_p, ctypes.c_int]

RECURSE_CHAIN = 0


def main(path):
    bio = crypto.BIO_new_file(path.encode(), b"r")
    if not bio:
        sys.exit("cannot open " + path)
    certs = []
    while True:
        x = crypto.PEM_read_bio_X509(bio, None, None, None)
        if not x:
            break
        certs.append(x)
    crypto.BIO_free(bio)
    chain = crypto.OPENSSL_sk_new_null()
    for x in certs:
        crypto.OPENSSL_sk_push(chain, x)
    vd = voms.VOMS_Init(None, None)  # the vomsdir and CA dir from the environment
    err = ctypes.c_int(0)
    ok = voms.VOMS_Retrieve(certs[0], chain, RECURSE_CHAIN, vd, ctypes.byref(err))
    out = {"ok": bool(ok), "error": "", "vos": []}
    if not ok:
        msg = voms.VOMS_ErrorMessage(vd, err.value, ctypes.create_string_buffer(2048), 2048)
        out["error"] = (msg or b"").decode(errors="replace")
    else:
        i = 0
        while vd.contents.data and vd.contents.data[i]:
            v = vd.contents.data[i].contents
            fqans, j = [], 0
            while v.fqan and v.fqan[j]:
                fqans.append(v.fqan[j].decode())
                j += 1
            out["vos"].append({"vo": v.voname.decode(), "fqans": fqans})
            i += 1
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
