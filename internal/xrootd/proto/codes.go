// Package proto holds the XRootD wire protocol's constants and framing, shared
// by the sitebox server and client. Values follow XRootD 5.5's XProtocol.hh;
// all integers travel in network byte order.
package proto

// ProtocolVersion is the protocol version sitebox speaks (5.1.1, as
// XRootD 5.5 servers announce).
const ProtocolVersion = 0x00000511

// Request IDs (XRequestTypes).
const (
	ReqAuth     uint16 = 3000
	ReqQuery    uint16 = 3001
	ReqChmod    uint16 = 3002
	ReqClose    uint16 = 3003
	ReqDirlist  uint16 = 3004
	ReqGPFile   uint16 = 3005
	ReqProtocol uint16 = 3006
	ReqLogin    uint16 = 3007
	ReqMkdir    uint16 = 3008
	ReqMv       uint16 = 3009
	ReqOpen     uint16 = 3010
	ReqPing     uint16 = 3011
	ReqChkPoint uint16 = 3012
	ReqRead     uint16 = 3013
	ReqRm       uint16 = 3014
	ReqRmdir    uint16 = 3015
	ReqSync     uint16 = 3016
	ReqStat     uint16 = 3017
	ReqSet      uint16 = 3018
	ReqWrite    uint16 = 3019
	ReqFattr    uint16 = 3020
	ReqPrepare  uint16 = 3021
	ReqStatx    uint16 = 3022
	ReqEndsess  uint16 = 3023
	ReqBind     uint16 = 3024
	ReqReadv    uint16 = 3025
	ReqPgwrite  uint16 = 3026
	ReqLocate   uint16 = 3027
	ReqTruncate uint16 = 3028
	ReqSigver   uint16 = 3029
	ReqPgread   uint16 = 3030
	ReqWritev   uint16 = 3031

	reqFirst = ReqAuth
	reqLast  = ReqWritev
)

var requestNames = [...]string{
	"auth", "query", "chmod", "close", "dirlist", "gpfile", "protocol", "login",
	"mkdir", "mv", "open", "ping", "chkpoint", "read", "rm", "rmdir", "sync",
	"stat", "set", "write", "fattr", "prepare", "statx", "endsess", "bind",
	"readv", "pgwrite", "locate", "truncate", "sigver", "pgread", "writev",
}

// RequestName returns the protocol name of a request ID ("kXR_read" → "read"),
// or "unknown" for IDs outside the protocol.
func RequestName(id uint16) string {
	if id < reqFirst || id > reqLast {
		return "unknown"
	}
	return requestNames[id-reqFirst]
}

// Response status codes (XResponseType).
const (
	StatusOK       uint16 = 0
	StatusOKSoFar  uint16 = 4000
	StatusAttn     uint16 = 4001
	StatusAuthMore uint16 = 4002
	StatusError    uint16 = 4003
	StatusRedirect uint16 = 4004
	StatusWait     uint16 = 4005
	StatusWaitResp uint16 = 4006
	StatusStatus   uint16 = 4007 // kXR_status: pgread/pgwrite responses
)

// Error codes carried in kXR_error responses (XErrorCode).
const (
	ErrArgInvalid     int32 = 3000
	ErrArgMissing     int32 = 3001
	ErrArgTooLong     int32 = 3002
	ErrFileLocked     int32 = 3003
	ErrFileNotOpen    int32 = 3004
	ErrFSError        int32 = 3005
	ErrInvalidRequest int32 = 3006
	ErrIOError        int32 = 3007
	ErrNoMemory       int32 = 3008
	ErrNoSpace        int32 = 3009
	ErrNotAuthorized  int32 = 3010
	ErrNotFound       int32 = 3011
	ErrServerError    int32 = 3012
	ErrUnsupported    int32 = 3013
	ErrNoServer       int32 = 3014
	ErrNotFile        int32 = 3015
	ErrIsDirectory    int32 = 3016
	ErrCancelled      int32 = 3017
	ErrItExists       int32 = 3018
	ErrChkSumErr      int32 = 3019
	ErrInProgress     int32 = 3020
	ErrOverQuota      int32 = 3021
	ErrSigVerErr      int32 = 3022
	ErrDecryptErr     int32 = 3023
	ErrOverloaded     int32 = 3024
	ErrFSReadOnly     int32 = 3025
	ErrBadPayload     int32 = 3026
	ErrAttrNotFound   int32 = 3027
	ErrTLSRequired    int32 = 3028
	ErrNoReplicas     int32 = 3029
	ErrAuthFailed     int32 = 3030
	ErrImpossible     int32 = 3031
	ErrConflict       int32 = 3032
	ErrTooManyErrs    int32 = 3033
	ErrReqTimedOut    int32 = 3034
)

// Open options (XOpenRequestOption).
const (
	OpenCompress  uint16 = 0x0001
	OpenDelete    uint16 = 0x0002 // truncate an existing file / create
	OpenForce     uint16 = 0x0004
	OpenNew       uint16 = 0x0008 // create, fail if it exists
	OpenRead      uint16 = 0x0010
	OpenUpdate    uint16 = 0x0020
	OpenAsync     uint16 = 0x0040
	OpenRefresh   uint16 = 0x0080
	OpenMkpath    uint16 = 0x0100
	OpenAppend    uint16 = 0x0200
	OpenRetstat   uint16 = 0x0400
	OpenReplica   uint16 = 0x0800
	OpenPosc      uint16 = 0x1000
	OpenNoWait    uint16 = 0x2000
	OpenSeqIO     uint16 = 0x4000
	OpenWriteOnly uint16 = 0x8000
)

// Locate options share bits with open.
const (
	LocateCompress = OpenCompress // unique hosts only
	LocateRefresh  = OpenRefresh
	LocatePrefName = OpenMkpath // 0x100: prefer names over addresses
	Locate4Dirlist = OpenRetstat
	LocateNoWait   = OpenNoWait
)

// Access mode bits (XOpenRequestMode) in open, mkdir and chmod.
const (
	ModeUR uint16 = 0x100
	ModeUW uint16 = 0x080
	ModeUX uint16 = 0x040
	ModeGR uint16 = 0x020
	ModeGW uint16 = 0x010
	ModeGX uint16 = 0x008
	ModeOR uint16 = 0x004
	ModeOW uint16 = 0x002
	ModeOX uint16 = 0x001
)

// Mkdir options.
const MkdirPath byte = 1

// Stat request options and response flags (XStatRespFlags).
const (
	StatVFS byte = 1

	StatFlagFile     = 0
	StatFlagXset     = 1
	StatFlagIsDir    = 2
	StatFlagOther    = 4
	StatFlagOffline  = 8
	StatFlagReadable = 16
	StatFlagWritable = 32
	StatFlagPoscPend = 64
	StatFlagBkpExist = 128
)

// Dirlist options.
const (
	DirlistOnline byte = 1
	DirlistDstat  byte = 2
	DirlistDcksm  byte = 4
)

// Query info types (XQueryType).
const (
	QueryStats  uint16 = 1
	QueryPrep   uint16 = 2
	QueryCksum  uint16 = 3
	QueryXattr  uint16 = 4
	QuerySpace  uint16 = 5
	QueryCkscan uint16 = 6
	QueryConfig uint16 = 7
	QueryVisa   uint16 = 8
	QueryOpaque uint16 = 16
	QueryOpaquf uint16 = 32
	QueryOpaqug uint16 = 64
)

// kXR_protocol request flags and response flags.
const (
	ProtoReqSecReqs byte = 0x01
	ProtoReqAbleTLS byte = 0x02
	ProtoReqWantTLS byte = 0x04
	ProtoReqBifReqs byte = 0x08
	// ProtoExpectLogin is the kXR_protocol "expect" byte of a main
	// connection: a login follows.
	ProtoExpectLogin byte = 0x03

	ProtoIsServer  uint32 = 0x00000001
	ProtoIsManager uint32 = 0x00000002
	ProtoAttrMeta  uint32 = 0x00000100
	ProtoAttrProxy uint32 = 0x00000200
	ProtoSupPgRW   uint32 = 0x00200000
	ProtoSupPosc   uint32 = 0x00100000
	ProtoHaveTLS   uint32 = 0x80000000
	ProtoGotoTLS   uint32 = 0x40000000
	ProtoTLSData   uint32 = 0x01000000
	ProtoTLSGPF    uint32 = 0x02000000
	ProtoTLSLogin  uint32 = 0x04000000
	ProtoTLSSess   uint32 = 0x08000000
	ProtoTLSTPC    uint32 = 0x10000000
)

// Login capability version (low bits of capver) and abilities.
const (
	LoginVer005      byte = 5
	LoginAsyncCap    byte = 128
	LoginVerMask     byte = 63
	LoginAbleFullURL byte = 1
)

// pgread / pgwrite: data travels in 4 KiB pages, each preceded by its
// CRC32C in both directions; the first page runs from the offset to the next
// 4 KiB boundary. See ServerResponseBody_Status.
const (
	PgPageSize = 4096
	PgUnitSize = PgPageSize + 4
	PgMaxEpr   = 128
	PgRetry    = 0x01 // reqflags: this is a retransmission
	// AnyPath in a pgread's or pgwrite's pathid lets the server choose
	// the connection (kXR_AnyPath).
	AnyPath = 0xff

	// StatusBodyLen is the size of ServerResponseBody_Status.
	StatusBodyLen = 16

	RespFinal    byte = 0x00
	RespPartial  byte = 0x01
	RespProgress byte = 0x02
)

// readv limits: a read_list element is 16 bytes and XRootD caps a request at
// 16384 bytes of list (1024 elements) and each element at ReadvMaxElemLen.
const (
	ReadvElemLen    = 16
	ReadvMaxElems   = 1024
	ReadvMaxElemLen = 2097136 // XRootD's readv_ior_max: 2 MiB minus a 16-byte header
)

// kXR_writev: a write_list element has a read_list element's layout, and
// XRootD caps the list as it caps a readv's (XrdProto::maxWvecsz). Option
// WritevSync asks for each file to be synced once its segments are written.
const (
	WritevMaxElems      = ReadvMaxElems
	WritevSync     byte = 0x01
)

// Handshake: a client opens with 20 bytes (0,0,0,0, 0,0,0,0, 0,0,0,4, 0,0,7,0xdc)
// usually followed at once by a kXR_protocol request.
const (
	HandshakeLen      = 20
	HandshakeFourth   = 4
	HandshakeFifth    = 2012
	ServerTypeLBal    = 0 // kXR_LBalServer: a redirector
	ServerTypeData    = 1 // kXR_DataServer
	HandshakeRespDlen = 8
)
