package ompt

const sysGetcpu = 309 // getcpu on linux/amd64
