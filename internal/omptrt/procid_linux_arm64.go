package omptrt

const (
	sysGetcpu = 168 // getcpu on linux/arm64
	sysGettid = 178 // gettid on linux/arm64
)
