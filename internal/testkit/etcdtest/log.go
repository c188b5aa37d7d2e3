package etcdtest

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// serverLogger is the members' logger: quiet but for what ends a member
// or the process. etcd stops on a fatal error with os.Exit(1), even when
// its logger writes nothing, so a test process would end without a word;
// this says why, on standard error.
func serverLogger() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zapcore.DPanicLevel)
	return zap.New(core)
}

// nopLogger is the clients' logger.
func nopLogger() *zap.Logger { return zap.NewNop() }
