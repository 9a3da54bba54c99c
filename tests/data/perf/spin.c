#include <stdio.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot_function(void){ for (unsigned long i=0;i<200000;i++) sink+=i*i; }
__attribute__((noinline)) void caller_function(void){ for(int j=0;j<2000;j++){ hot_function(); if(j%200==0) getppid(); } }
int main(void){ caller_function(); return 0; }
