package ompt

const sysGetcpu = 168 // getcpu on linux/arm64
