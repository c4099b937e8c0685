package gsi

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
)

// The one cipher offered: XRootD's first choice, which every client
// version has. A client names its choice "aes-128-cbc#16", the IV length
// after '#'; each encrypted bucket is the IV followed by the
// ciphertext, PKCS #7 padded.
const (
	cipherName = "aes-128-cbc"
	aesKeySize = 16
	ivSize     = aes.BlockSize
)

var errDecrypt = errors.New("the main buffer does not decrypt with the session key")

// decryptBucket opens IV ‖ ciphertext. The padding is checked in
// constant time; any failure is one error, so a peer learns nothing of
// the plaintext from which check failed (and the handshake ends at the
// first failure anyway).
func decryptBucket(key, data []byte) ([]byte, error) {
	if len(data) < ivSize+aes.BlockSize || len(data)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("%w (%d bytes)", errDecrypt, len(data))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(data)-ivSize)
	cipher.NewCBCDecrypter(block, data[:ivSize]).CryptBlocks(out, data[ivSize:])
	n, ok := unpad(out)
	if !ok {
		return nil, errDecrypt
	}
	return out[:n], nil
}

// unpad checks PKCS #7 padding without branching on its bytes.
func unpad(b []byte) (int, bool) {
	last := b[len(b)-1]
	good := subtle.ConstantTimeLessOrEq(1, int(last)) & subtle.ConstantTimeLessOrEq(int(last), aes.BlockSize)
	for i := 1; i <= aes.BlockSize; i++ {
		inPad := subtle.ConstantTimeLessOrEq(i, int(last))
		match := subtle.ConstantTimeByteEq(b[len(b)-i], last)
		good &= match | (inPad ^ 1)
	}
	return len(b) - int(last), good == 1
}

// encryptBucket is decryptBucket's inverse, with a fresh random IV.
func encryptBucket(key, plain []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	out := make([]byte, ivSize+len(plain)+pad)
	if _, err := io.ReadFull(rand.Reader, out[:ivSize]); err != nil {
		return nil, err
	}
	body := out[ivSize:]
	copy(body, plain)
	for i := len(plain); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, out[:ivSize]).CryptBlocks(body, body)
	return out, nil
}
